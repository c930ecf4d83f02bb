"""The PyTorch form of one decode-step layer variant, and the runtime around it.

``DecodeLayer`` computes what layoutx models for a variant, op for op (cf. model/builder.cc and
the README's "Op by op" table), with the emitted ONNX's I/O signature: ``forward(hidden_in,
k_cache, v_cache, mask[, rope_cos, rope_sin]) -> (hidden_out, k_out, v_out)``, all float32:

  hidden_in [1, H]; k_cache [kv, D, N] (k_layout=transposed, the default) or [kv, N, D]
  (k_layout=rows); v_cache [kv, N, D]; mask [1, 1, N+1] (additive: 0 for an open slot and the
  new token, the layer's mask value where unwritten or, sliding_cache=context, older than the
  window); rope_cos/rope_sin [1, 1, r] for the absolute position (absent when r = 0).
  returns=window:    k_out, v_out in the caches' shapes, the updated window (oldest dropped).
  returns=new_entry: k_out [kv, D, 1] (rows: [kv, 1, D]), v_out [kv, 1, D], the new entry only.

The exporters' forms (issue 34) come from the same document: k_layout=rows (scores read K
transposed, the new key is a row), softmax=masked (the mask add folded into the softmax: the
same function in float), sliding_cache=context (the graph's N is ctx-1; the runtime masks by
age), heads=per_head (one op chain per query head on [1, 1, D], over its columns of the
projection; the caches stay one tensor per layer, sliced per KV head and joined back),
projection=conv1x1 (each projection a 1x1 Conv2d on [1, C, 1, 1] by its weight laid out
[out, in, 1, 1]; the checkpoint's [in, out] tensor, quantized before it is laid out). kv_dtype (u8/u16 cache I/O) and weight_quant (LPBQ blocks) change only codes: the float
graph is the same (the emitted ONNX casts), and ``layoutx.torch_quant`` simulates the codes.

The layer's shapes and variant come from ``layoutx.graph`` (the same model loader and variant
parser as the command line), so nothing about a model is restated here. ``Runtime`` plays the
cache for a token history the way the device runtime does (ring slot t mod N, append at t,
or take the returned window). Precisions w8a16/w4a16 are the same float graph, as emitted:
quantization is the device toolchain's (``layoutx.torch_quant`` simulates the u8 cache codes and
the 4-bit block weights on request).
"""
import math

import numpy as np
import torch
from torch import nn

import layoutx
from layoutx import torch_quant

# Checkpoints (safetensors through the weight map) live in layoutx.checkpoint; the names are
# kept here, where the module's users have always found them.
from layoutx.checkpoint import (NORMS, PROJECTIONS, load_safetensors, load_weight_map, read_safetensors,  # noqa: F401
                                write_random_checkpoint, write_safetensors)


# The axes and values DecodeLayer and Runtime compute. The graph document names every priced axis
# and an unpriced one when off its default; an axis or value not here is refused by name rather
# than computed as something else (a new form goes here and where DecodeLayer reads it).
FORMS = {
    "returns": ("window", "new_entry"),
    "join": ("keys", "scores"),
    "softmax": ("fused", "explicit", "masked"),
    "new_score": ("matmul", "mul_reducesum"),
    "new_value": ("matmul", "broadcast_mul"),
    "gelu": ("erf", "tanh"),
    "precision": ("fp16", "w8a16", "w4a16"),
    "kv_dtype": ("f16", "u8", "u16"),
    "k_layout": ("transposed", "rows"),
    "weight_quant": ("per_channel", "block16", "block32", "block64"),
    "sliding_cache": ("window", "context"),
    "heads": ("grouped", "per_head"),
    "projection": ("matmul", "conv1x1"),
}


class LayerConfig:
    """One layer type at one context and one variant, as ``layoutx graph --json`` describes it."""

    def __init__(self, graph_doc):
        spec = graph_doc["layer_spec"]
        self.variant_key = graph_doc["variant_key"]
        self.axes = graph_doc["axes"]  # every priced axis that applies; an unpriced one off its default
        for axis, value in self.axes.items():
            if value not in FORMS.get(axis, ()):
                raise layoutx.Error(f"layoutx.torch: {self.variant_key}: {axis}={value} is not mirrored here "
                                    f"(layoutx.torch computes {', '.join(f'{a}={v}' for a in FORMS for v in FORMS[a])})")
        self.layer = graph_doc["layer"]
        self.ctx = graph_doc["ctx"]
        self.cache_entries = graph_doc["cache_entries"]
        self.hidden = spec["hidden"]
        self.intermediate = spec["intermediate"]
        self.heads = spec["heads"]
        self.kv_heads = spec["kv_heads"]
        self.head_dim = spec["head_dim"]
        self.window = spec["window"]
        self.rope_theta = spec["rope_theta"]
        self.rotary_dims = spec["rotary_dims"]
        self.rms_eps = spec["rms_eps"]
        self.activation = spec["activation"]
        self.head_gate = spec["head_gate"]
        self.mask_value = spec["mask_value"]
        # The exporters' forms (issue 34); a document without them (an older layoutx, or an axis
        # that does not apply) means the default. cache_entries is already the form's N.
        self.k_rows = self.axes.get("k_layout", "transposed") == "rows"
        self.kv_dtype = self.axes.get("kv_dtype", "f16")
        self.weight_quant = self.axes.get("weight_quant", "per_channel")
        self.sliding_cache = self.axes.get("sliding_cache", "window")
        self.per_head = self.axes.get("heads", "grouped") == "per_head"
        self.conv = self.axes.get("projection", "matmul") == "conv1x1"
        # Op names by kind, for the forms that are points in the graph (the u8 cache Converts).
        self.u8_converts = [op["name"] for op in graph_doc["ops"] if op["kind"] == "Convert" and op.get("dtype") == "u8"]
        # Weight shapes by role, from the graph's own Weight ops, in the checkpoint's layouts: a
        # conv1x1 weight [out, in, 1, 1] is the role's [in, out] tensor (model/graph.h conv_layout).
        self.weight_shapes = {op["role"]: (op["output_shape"] if len(op["output_shape"]) != 4
                                           else op["output_shape"][1::-1])
                              for op in graph_doc["ops"] if op["kind"] == "Weight"}

    @classmethod
    def of(cls, model=None, layer="sliding", ctx=4096, layout="roll", set=None, precision=None):
        """The config of ``layoutx graph --model M --layer L --ctx C --layout P --set ...``.
        ``layout`` may be a preset or a canonical variant key (a layout file's ``variant_key``)."""
        return cls(layoutx.graph(model=model, layer=layer, ctx=ctx, layout=layout, set=set, precision=precision))

    @property
    def group(self):
        return self.heads // self.kv_heads

    @property
    def k_slot_axis(self):
        """The K cache's slot axis: 2 of [kv, D, N] (transposed), 1 of [kv, N, D] (rows)."""
        return 1 if self.k_rows else 2

    def k_cache_shape(self, entries):
        kv, D = self.kv_heads, self.head_dim
        return (kv, entries, D) if self.k_rows else (kv, D, entries)


def _rmsnorm(x, w, eps):
    # Mul(x, x), ReduceMean, Add(eps), Sqrt, Div, Mul(weight): the emitted ONNX's form.
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


class DecodeLayer(nn.Module):
    """One decode step of one layer variant (see the module docstring for the signature)."""

    def __init__(self, config, weights, cache_codes=None, quantize_weights=False, observe=None):
        """``weights``: {role: array or tensor} in the graph's layouts (``load_safetensors``).
        ``cache_codes``: a ``torch_quant.CacheCodes`` (kv_dtype=u8: the u8 Converts' codes);
        ``quantize_weights``: projections take their w8/w4 values (weight_quant's blocks) as
        the executor's quantizer gives them; ``observe``: a dict that collects, per u8 Convert
        name, the float values that reach it (for ``torch_quant.calibrate_cache_ranges``)."""
        super().__init__()
        self.config = c = config
        self.cache_codes, self.observe = cache_codes, observe
        bits = {"w8a16": 8, "w4a16": 4}.get(c.axes["precision"])
        for role, shape in c.weight_shapes.items():
            if role not in weights:
                raise layoutx.Error(f"layoutx.torch: weight '{role}' is missing")
            t = torch.as_tensor(np.asarray(weights[role]), dtype=torch.float32)
            if list(t.shape) != list(shape):
                raise layoutx.Error(f"layoutx.torch: weight '{role}' is {list(t.shape)}, the layer needs {list(shape)}")
            if quantize_weights and bits and role in PROJECTIONS:
                t = torch_quant.quantize_projection(t, c.weight_quant, bits)
            if c.conv and role in PROJECTIONS:  # quantized as [in, out], laid out as Conv's [out, in, 1, 1]
                t = t.t().reshape(t.shape[1], t.shape[0], 1, 1)
            self.register_buffer(role, t.contiguous().clone())
        self.scale = 1.0 / math.sqrt(c.head_dim)

    def _convert(self, name, x):
        """The graph's Convert `name` (u8 cache codes): identity in the float graph, the codes
        with cache_codes; observed for calibration."""
        if self.observe is not None and name in self.config.u8_converts:
            self.observe.setdefault(name, []).append(x.detach().clone())
        return self.cache_codes(name, x) if self.cache_codes is not None else x

    def _project(self, x, role, cols=None):
        """x [1, in] by the projection `role` (columns [c0, c1) of it with cols=(c0, c1): a
        per-head part, a Slice of the one weight) -> [1, out]. projection=matmul: x @ W [in, out];
        conv1x1: x viewed as [1, in, 1, 1], a 1x1 Conv by W [out, in, 1, 1], viewed back."""
        w = getattr(self, role)
        if not self.config.conv:
            return x @ (w if cols is None else w[:, cols[0] : cols[1]])
        w = w if cols is None else w[cols[0] : cols[1]]
        return nn.functional.conv2d(x.reshape(1, -1, 1, 1), w).reshape(1, -1)

    def _rope(self, x, cos, sin):
        # NeoX over the leading r dims: x*cos + rotate_half(x)*sin, rotate_half = [-x2, x1].
        r, d = self.config.rotary_dims, self.config.head_dim
        xr = x[..., :r] if r < d else x
        x1, x2 = xr[..., : r // 2], xr[..., r // 2 : r]
        y = xr * cos + torch.cat([-x2, x1], dim=-1) * sin
        return torch.cat([y, x[..., r:d]], dim=-1) if r < d else y

    def _softmax(self, scores, mask):
        form = self.config.axes["softmax"]
        if form == "masked":
            # QNN's MaskedSoftmax: the add folded into the op; in float the same function
            # (exported as Add + Softmax, as layoutx's ONNX writes it).
            return torch.softmax(scores + mask, dim=-1)
        x = scores + mask
        if form == "fused":
            return torch.softmax(x, dim=-1)
        m = x.amax(dim=-1, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)

    def _activation(self, g):
        c = self.config
        if c.activation == "silu":
            return g * torch.sigmoid(g)
        if c.axes["gelu"] == "erf":
            return 0.5 * g * (1.0 + torch.erf(g / math.sqrt(2.0)))
        return 0.5 * g * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g * g * g)))

    def _keys(self, q, k):
        """q @ K for K in the cache's layout: [n, D, m] as is, [n, m, D] (rows) transposed."""
        return q @ (k.transpose(-1, -2) if self.config.k_rows else k)

    def _kv_join(self, k, v_new, k_cache, v_cache, prefix):
        """n KV heads' new entry and (join=keys or returns=window) cache + entry: k/v_new
        [n, 1, D], caches [n, D, N] or [n, N, D] and [n, N, D]. Returns (k_new in K's layout,
        k_entry, v_entry, k_all, v_all); the Converts are named `prefix`k_new/to_cache etc."""
        c, ax = self.config, self.config.axes
        k_new = k if c.k_rows else k.reshape(k.shape[0], c.head_dim, 1)  # the new key in K's layout
        # The new entry as the cache holds it: a quantized graph's u8 cache takes its codes once
        # (an fp16 graph has no such Convert: it quantizes its outputs).
        k_entry = self._convert(prefix + "k_new/to_cache", k_new)
        v_entry = self._convert(prefix + "v_new/to_cache", v_new)
        k_all = v_all = None
        if ax["join"] == "keys" or ax["returns"] == "window":
            k_all = torch.cat([k_cache, k_entry], dim=c.k_slot_axis)  # [n, D, N+1] or [n, N+1, D]
            v_all = torch.cat([v_cache, v_entry], dim=1)  # [n, N+1, D]
        return k_new, k_entry, v_entry, k_all, v_all

    def _attend(self, q, k, v_new, k_cache, v_cache, joined, mask):
        """Scores, softmax and weighted values of queries q [n, g, D] over their KV heads' cache and
        new entry (k/v_new [n, 1, D]; `joined` from _kv_join): the context [n, g, D]."""
        c, ax = self.config, self.config.axes
        N = c.cache_entries
        k_new, _, _, k_all, v_all = joined
        # Where the new token meets the cache.
        if ax["join"] == "keys":
            scores = self._keys(q, k_all)
        else:
            s_cache = self._keys(q, k_cache)
            s_new = self._keys(q, k_new) if ax["new_score"] == "matmul" else (q * k).sum(dim=-1, keepdim=True)
            scores = torch.cat([s_cache, s_new], dim=-1)
        probs = self._softmax(scores, mask)
        if ax["join"] == "keys":
            return probs @ v_all
        p_cache, p_new = probs[..., :N], probs[..., N : N + 1]
        c_new = p_new @ v_new if ax["new_value"] == "matmul" else p_new * v_new
        return p_cache @ v_cache + c_new

    def _outputs(self, joined):
        """The K/V outputs of the form: the updated window (oldest dropped) or the new entry."""
        c = self.config
        _, k_entry, v_entry, k_all, v_all = joined
        if c.axes["returns"] == "window":
            return k_all.narrow(c.k_slot_axis, 1, c.cache_entries), v_all[:, 1:, :]
        return k_entry, v_entry

    def _attention(self, xn, k_cache, v_cache, mask, cos, sin):
        """heads=grouped (one op per tensor, heads as an axis): fused QKV, q [kv, G, D], k/v_new
        [kv, 1, D]; returns the gated context [kv, G, D] and the K/V outputs."""
        c = self.config
        kv, G, D, nh = c.kv_heads, c.group, c.head_dim, c.heads
        qkv = self._project(xn, "q_k_v_proj")
        q = qkv[:, : nh * D].reshape(kv, G, D)
        k = qkv[:, nh * D : (nh + kv) * D].reshape(kv, 1, D)
        v_new = qkv[:, (nh + kv) * D : (nh + 2 * kv) * D].reshape(kv, 1, D)
        if c.rotary_dims > 0:
            q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
        q = q * self.scale
        joined = self._kv_join(k, v_new, k_cache, v_cache, "attn/")
        context = self._attend(q, k, v_new, k_cache, v_cache, joined, mask)
        # Head-wise gate: one sigmoid scalar per query head, from the normed input.
        if c.head_gate:
            context = context * torch.sigmoid(self._project(xn, "g_proj")).reshape(kv, G, 1)
        return context, self._outputs(joined)

    def _attention_per_head(self, xn, k_cache, v_cache, mask, cos, sin):
        """heads=per_head (builder.cc attention_per_head, the exporters' MHA-to-SHA form): per KV
        head j its k/v projection over its columns of the fused weight, RoPE, a Slice of each
        cache, its entry and join; per query head i (KV head i // G) its q projection, RoPE,
        scale, scores, softmax, weighted values and gate on [1, 1, D]. Returns the heads'
        contexts concatenated [1, 1, nh D] and the K/V outputs (the heads' parts concatenated)."""
        c = self.config
        kv, G, D, nh = c.kv_heads, c.group, c.head_dim, c.heads
        head = lambda offset, h: self._project(xn, "q_k_v_proj", ((offset + h) * D, (offset + h + 1) * D)).reshape(1, 1, D)
        kvh = []
        for j in range(kv):
            k, v = head(nh, j), head(nh + kv, j)
            if c.rotary_dims > 0:
                k = self._rope(k, cos, sin)
            caches = k_cache[j : j + 1], v_cache[j : j + 1]
            kvh.append((k, v, caches, self._kv_join(k, v, *caches, f"attn/kv{j}/")))
        gate = torch.sigmoid(self._project(xn, "g_proj")) if c.head_gate else None  # [1, nh]
        contexts = []
        for i in range(nh):
            k, v, caches, joined = kvh[i // G]
            q = head(0, i)
            if c.rotary_dims > 0:
                q = self._rope(q, cos, sin)
            context = self._attend(q * self.scale, k, v, *caches, joined, mask)
            contexts.append(context * gate[:, i : i + 1] if gate is not None else context)
        outs = [self._outputs(joined) for _, _, _, joined in kvh]
        cat = lambda xs, dim: xs[0] if len(xs) == 1 else torch.cat(xs, dim=dim)
        return cat(contexts, -1), (cat([k for k, _ in outs], 0), cat([v for _, v in outs], 0))

    def forward(self, hidden_in, k_cache, v_cache, mask, rope_cos=None, rope_sin=None):
        c = self.config
        # Attention block: pre-norm, QKV, RoPE, scaled scores, per the heads form.
        xn = _rmsnorm(hidden_in, self.input_layernorm, c.rms_eps)
        attention = self._attention_per_head if c.per_head else self._attention
        context, (k_out, v_out) = attention(xn, k_cache, v_cache, mask, rope_cos, rope_sin)
        h = hidden_in + self._project(context.reshape(1, c.heads * c.head_dim), "out_proj")
        # Gated MLP: down(act(gate(x)) * up(x)).
        hn = _rmsnorm(h, self.post_attention_layernorm, c.rms_eps)
        y = h + self._project(self._activation(self._project(hn, "gate_proj")) * self._project(hn, "up_proj"),
                              "down_proj")
        # An fp16 graph's u8 cache: the outputs are quantized at the boundary.
        return y, self._convert("out/k_out/quantize", k_out), self._convert("out/v_out/quantize", v_out)

    def input_names(self):
        """The ONNX input names, in forward's order (the emitted ONNX's names)."""
        names = ["hidden_in", "k_cache", "v_cache", "mask"]
        return names + (["rope_cos", "rope_sin"] if self.config.rotary_dims > 0 else [])

    OUTPUT_NAMES = ("hidden_out", "k_out", "v_out")

    def export_onnx(self, path, example):
        """torch.onnx.export with the emitted ONNX's input and output names, opset 17 (the one
        layoutx emits); ``example``: one step's inputs in forward's order (Runtime.inputs)."""
        example = tuple(torch.as_tensor(x, dtype=torch.float32) for x in example)
        torch.onnx.export(self, example, path, input_names=self.input_names(), output_names=list(self.OUTPUT_NAMES),
                          opset_version=17)


class Part(nn.Module):
    """Consecutive decoder layers as one graph: a part (context binary) of a whole-model layout
    (``layoutx propose``), with the I/O signature ``layoutx emit --parts`` gives it (emit/part.h):
    hidden_in -> hidden_out through every layer inside; each layer i's caches as
    ``layer<i>_k_cache``/``layer<i>_v_cache`` in and ``layer<i>_k_out``/``layer<i>_v_out`` out;
    the layers of one type share ``<type>_mask`` (and ``<type>_rope_cos``/``_rope_sin``).
    ``layers``: [(decoder layer index, DecodeLayer)], ascending and consecutive."""

    def __init__(self, layers):
        super().__init__()
        self.indices = [i for i, _ in layers]
        if self.indices != list(range(self.indices[0], self.indices[0] + len(self.indices))):
            raise layoutx.Error(f"layoutx.torch.Part: layers {self.indices} are not consecutive")
        self.decoders = nn.ModuleList([m for _, m in layers])

    def input_names(self):
        """The part's inputs in the order layoutx emits them: hidden_in, then per layer its
        caches and, at the first layer of its type, the type's mask and rotary tables."""
        names, seen = ["hidden_in"], set()
        for i, m in zip(self.indices, self.decoders):
            names += [f"layer{i}_k_cache", f"layer{i}_v_cache"]
            t = m.config.layer
            if t not in seen:
                seen.add(t)
                names += [f"{t}_{n}" for n in m.input_names()[3:]]
        return names

    def output_names(self):
        return [f"layer{i}_{n}" for i in self.indices for n in ("k_out", "v_out")] + ["hidden_out"]

    def forward(self, *inputs):
        x = dict(zip(self.input_names(), inputs))
        h, kv = x["hidden_in"], []
        for i, m in zip(self.indices, self.decoders):
            t = m.config.layer
            shared = [x[f"{t}_{n}"] for n in m.input_names()[3:]]
            h, k, v = m(h, x[f"layer{i}_k_cache"], x[f"layer{i}_v_cache"], *shared)
            kv += [k, v]
        return (*kv, h)

    def export_onnx(self, path, feeds):
        """torch.onnx.export under the part's names, opset 17; ``feeds``: {input name: array}."""
        example = tuple(torch.as_tensor(feeds[n], dtype=torch.float32) for n in self.input_names())
        torch.onnx.export(self, example, path, input_names=self.input_names(), output_names=self.output_names(),
                          opset_version=17)


class Runtime:
    """The cache around one layer over a token history, as the device runtime keeps it.

    ``inputs(hidden)`` gives the step's graph inputs (cache, mask, rotary tables of position t);
    ``absorb(k_out, v_out)`` takes the step's K/V back: the returned window becomes the cache
    (written slots are the newest min(t+1, N), at the end), or the new entry goes into slot
    t mod N (sliding: the ring) or t (full: append), a key as a column (k_layout=transposed) or
    a row (rows). A slot is open to step t's query when written and, for a layer with a window,
    its token s is within it (t - s <= window - 1): only a cache longer than the window
    (sliding_cache=context) holds older tokens. The runtime tracks each slot's token, so the
    mask follows from what it wrote (not from the executor's slot formula)."""

    def __init__(self, config):
        c = self.config = config
        N = c.cache_entries
        self.t = 0
        self.k_cache = torch.zeros(*c.k_cache_shape(N))
        self.v_cache = torch.zeros(c.kv_heads, N, c.head_dim)
        self.token = torch.full((N,), -1, dtype=torch.long)  # the token each slot holds, -1: unwritten

    @property
    def written(self):
        return self.token >= 0

    def open_slots(self):
        """Slots step t's query sees: written, and within the window when the layer has one."""
        c = self.config
        is_open = self.written.clone()
        if c.window > 0:
            is_open &= (self.t - self.token) <= c.window - 1
        return is_open

    def max_steps(self):
        """Tokens an empty cache can take: a full layer that appends holds N + 1."""
        c = self.config
        if c.axes["returns"] == "new_entry" and c.layer == "full":
            return c.cache_entries + 1
        return None

    def rope_tables(self, position):
        """cos/sin [1, 1, r] of an absolute position: angle_i = p theta^(-2i/r), NeoX halves."""
        r = self.config.rotary_dims
        i = torch.arange(r // 2, dtype=torch.float64)
        a = position * torch.pow(torch.tensor(self.config.rope_theta, dtype=torch.float64), -2.0 * i / r)
        cos, sin = torch.cos(a).float(), torch.sin(a).float()
        return torch.cat([cos, cos]).reshape(1, 1, r), torch.cat([sin, sin]).reshape(1, 1, r)

    def inputs(self, hidden):
        c = self.config
        limit = self.max_steps()
        if limit is not None and self.t >= limit:
            raise layoutx.Error(f"runtime: a full layer at ctx {c.ctx} holds {limit} tokens; step {self.t} exceeds it")
        mask = torch.zeros(1, 1, c.cache_entries + 1)
        mask[0, 0, : c.cache_entries][~self.open_slots()] = c.mask_value
        args = [torch.as_tensor(hidden, dtype=torch.float32).reshape(1, c.hidden), self.k_cache.clone(),
                self.v_cache.clone(), mask]
        if c.rotary_dims > 0:
            args += list(self.rope_tables(self.t))
        return args

    def absorb(self, k_out, v_out):
        c, N = self.config, self.config.cache_entries
        if c.axes["returns"] == "window":
            self.k_cache, self.v_cache = k_out.detach().clone(), v_out.detach().clone()
            self.token = torch.cat([self.token[1:], torch.tensor([self.t])])  # the oldest dropped
        elif not (c.layer == "full" and self.t >= N):  # a full layer's last token has no slot
            slot = self.t % N if c.layer == "sliding" else self.t
            self.k_cache.select(c.k_slot_axis, slot).copy_(k_out.detach().select(c.k_slot_axis, 0))
            self.v_cache[:, slot, :] = v_out.detach()[:, 0, :]
            self.token[slot] = self.t
        self.t += 1

    def run(self, layer, hidden_states):
        """Runs ``layer`` over a history (one hidden vector per step); returns the per-step
        (hidden_out, k_out, v_out)."""
        outs = []
        with torch.no_grad():
            for h in hidden_states:
                y, k, v = layer(*self.inputs(h))
                self.absorb(k, v)
                outs.append((y, k, v))
        return outs
