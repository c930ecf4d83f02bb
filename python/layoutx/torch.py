"""The PyTorch form of one decode-step layer variant, and the runtime around it.

``DecodeLayer`` computes what layoutx models for a variant, op for op (cf. model/builder.cc and
the README's "Op by op" table), with the emitted ONNX's I/O signature: ``forward(hidden_in,
k_cache, v_cache, mask[, rope_cos, rope_sin]) -> (hidden_out, k_out, v_out)``, all float32:

  hidden_in [1, H]; k_cache [kv, D, N] (transposed); v_cache [kv, N, D]; mask [1, 1, N+1]
  (additive: 0 for a written slot and the new token, the layer's mask value where unwritten);
  rope_cos/rope_sin [1, 1, r] for the absolute position (absent when r = 0).
  returns=window:    k_out [kv, D, N], v_out [kv, N, D], the updated window (oldest dropped).
  returns=new_entry: k_out [kv, D, 1], v_out [kv, 1, D], the new entry only.

The layer's shapes and variant come from ``layoutx.graph`` (the same model loader and variant
parser as the command line), so nothing about a model is restated here. ``Runtime`` plays the
cache for a token history the way the device runtime does (ring slot t mod N, append at t,
or take the returned window). Precisions w8a16/w4a16 are the same float graph, as emitted:
quantization is the device toolchain's.
"""
import json
import math
import struct

import numpy as np
import torch
from torch import nn

import layoutx

# Roles of the layer's parameters, in the graph's layouts: projections [in, out], norms [H].
PROJECTIONS = ("q_k_v_proj", "g_proj", "out_proj", "gate_proj", "up_proj", "down_proj")
NORMS = ("input_layernorm", "post_attention_layernorm")


class LayerConfig:
    """One layer type at one context and one variant, as ``layoutx graph --json`` describes it."""

    def __init__(self, graph_doc):
        spec = graph_doc["layer_spec"]
        self.variant_key = graph_doc["variant_key"]
        self.axes = graph_doc["axes"]  # every axis that applies, defaults included
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
        # Weight shapes by role, from the graph's own Weight ops.
        self.weight_shapes = {op["role"]: op["output_shape"] for op in graph_doc["ops"] if op["kind"] == "Weight"}

    @classmethod
    def of(cls, model=None, layer="sliding", ctx=4096, layout="roll", set=None, precision=None):
        """The config of ``layoutx graph --model M --layer L --ctx C --layout P --set ...``.
        ``layout`` may be a preset or a canonical variant key (a layout file's ``variant_key``)."""
        return cls(layoutx.graph(model=model, layer=layer, ctx=ctx, layout=layout, set=set, precision=precision))

    @property
    def group(self):
        return self.heads // self.kv_heads


def _rmsnorm(x, w, eps):
    # Mul(x, x), ReduceMean, Add(eps), Sqrt, Div, Mul(weight): the emitted ONNX's form.
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


class DecodeLayer(nn.Module):
    """One decode step of one layer variant (see the module docstring for the signature)."""

    def __init__(self, config, weights):
        """``weights``: {role: array or tensor} in the graph's layouts (``load_safetensors``)."""
        super().__init__()
        self.config = c = config
        for role, shape in c.weight_shapes.items():
            if role not in weights:
                raise layoutx.Error(f"layoutx.torch: weight '{role}' is missing")
            t = torch.as_tensor(np.asarray(weights[role]), dtype=torch.float32)
            if list(t.shape) != list(shape):
                raise layoutx.Error(f"layoutx.torch: weight '{role}' is {list(t.shape)}, the layer needs {list(shape)}")
            self.register_buffer(role, t.clone())
        self.scale = 1.0 / math.sqrt(c.head_dim)

    def _rope(self, x, cos, sin):
        # NeoX over the leading r dims: x*cos + rotate_half(x)*sin, rotate_half = [-x2, x1].
        r, d = self.config.rotary_dims, self.config.head_dim
        xr = x[..., :r] if r < d else x
        x1, x2 = xr[..., : r // 2], xr[..., r // 2 : r]
        y = xr * cos + torch.cat([-x2, x1], dim=-1) * sin
        return torch.cat([y, x[..., r:d]], dim=-1) if r < d else y

    def _softmax(self, x):
        if self.config.axes["softmax"] == "fused":
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

    def forward(self, hidden_in, k_cache, v_cache, mask, rope_cos=None, rope_sin=None):
        c, ax = self.config, self.config.axes
        kv, G, D, N, nh = c.kv_heads, c.group, c.head_dim, c.cache_entries, c.heads
        # Attention block: pre-norm, fused QKV, RoPE, scaled scores.
        xn = _rmsnorm(hidden_in, self.input_layernorm, c.rms_eps)
        qkv = xn @ self.q_k_v_proj
        q = qkv[:, : nh * D].reshape(kv, G, D)
        k = qkv[:, nh * D : (nh + kv) * D].reshape(kv, 1, D)
        v_new = qkv[:, (nh + kv) * D : (nh + 2 * kv) * D].reshape(kv, 1, D)
        if c.rotary_dims > 0:
            q = self._rope(q, rope_cos, rope_sin)
            k = self._rope(k, rope_cos, rope_sin)
        q = q * self.scale
        k_new_t = k.reshape(kv, D, 1)
        k_all = v_all = None
        if ax["join"] == "keys" or ax["returns"] == "window":
            k_all = torch.cat([k_cache, k_new_t], dim=2)  # [kv, D, N+1]
            v_all = torch.cat([v_cache, v_new], dim=1)  # [kv, N+1, D]
        # Where the new token meets the cache.
        if ax["join"] == "keys":
            scores = q @ k_all
        else:
            s_cache = q @ k_cache
            s_new = q @ k_new_t if ax["new_score"] == "matmul" else (q * k).sum(dim=-1, keepdim=True)
            scores = torch.cat([s_cache, s_new], dim=-1)
        probs = self._softmax(scores + mask)
        if ax["join"] == "keys":
            context = probs @ v_all
        else:
            p_cache, p_new = probs[..., :N], probs[..., N : N + 1]
            c_new = p_new @ v_new if ax["new_value"] == "matmul" else p_new * v_new
            context = p_cache @ v_cache + c_new
        # Head-wise gate: one sigmoid scalar per query head, from the normed input.
        if c.head_gate:
            context = context * torch.sigmoid(xn @ self.g_proj).reshape(kv, G, 1)
        h = hidden_in + context.reshape(1, nh * D) @ self.out_proj
        # Gated MLP: down(act(gate(x)) * up(x)).
        hn = _rmsnorm(h, self.post_attention_layernorm, c.rms_eps)
        y = h + (self._activation(hn @ self.gate_proj) * (hn @ self.up_proj)) @ self.down_proj
        if ax["returns"] == "window":
            return y, k_all[:, :, 1 : N + 1], v_all[:, 1 : N + 1, :]
        return y, k_new_t, v_new

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


class Runtime:
    """The cache around one layer over a token history, as the device runtime keeps it.

    ``inputs(hidden)`` gives the step's graph inputs (cache, mask, rotary tables of position t);
    ``absorb(k_out, v_out)`` takes the step's K/V back: the returned window becomes the cache
    (written slots are the newest min(t+1, N), at the end), or the new entry goes into slot
    t mod N (sliding: the ring) or t (full: append) and that slot is unmasked."""

    def __init__(self, config):
        c = self.config = config
        N = c.cache_entries
        self.t = 0
        self.k_cache = torch.zeros(c.kv_heads, c.head_dim, N)
        self.v_cache = torch.zeros(c.kv_heads, N, c.head_dim)
        self.written = torch.zeros(N, dtype=torch.bool)

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
        mask[0, 0, : c.cache_entries][~self.written] = c.mask_value
        args = [torch.as_tensor(hidden, dtype=torch.float32).reshape(1, c.hidden), self.k_cache.clone(),
                self.v_cache.clone(), mask]
        if c.rotary_dims > 0:
            args += list(self.rope_tables(self.t))
        return args

    def absorb(self, k_out, v_out):
        c, N = self.config, self.config.cache_entries
        if c.axes["returns"] == "window":
            self.k_cache, self.v_cache = k_out.detach().clone(), v_out.detach().clone()
            filled = min(self.t + 1, N)
            self.written = torch.arange(N) >= N - filled
        elif not (c.layer == "full" and self.t >= N):  # a full layer's last token has no slot
            slot = self.t % N if c.layer == "sliding" else self.t
            self.k_cache[:, :, slot] = k_out.detach()[:, :, 0]
            self.v_cache[:, slot, :] = v_out.detach()[:, 0, :]
            self.written[slot] = True
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


# ---- weights from a safetensors checkpoint, through layoutx's weight map -----------------

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def read_safetensors(path):
    """{name: numpy array} of a safetensors file (F32, F16, F64 tensors; BF16 widened)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        lo, hi = t["data_offsets"]
        raw = data[lo:hi]
        if t["dtype"] == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif t["dtype"] in _DTYPES:
            a = np.frombuffer(raw, dtype=np.dtype(_DTYPES[t["dtype"]]).newbyteorder("<"))
        else:
            raise layoutx.Error(f"{path}: tensor '{name}' has dtype {t['dtype']}, not a float type")
        out[name] = a.reshape(t["shape"])
    return out


def write_safetensors(path, tensors):
    """Writes {name: array} as float32 safetensors (for tests and examples)."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(np.asarray(a, dtype="<f4")).tobytes()
        header[name] = {"dtype": "F32", "shape": list(np.shape(a)), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_random_checkpoint(path, weight_map, layers, seed):
    """A float32 checkpoint of random layers for tests and examples (no real weights ship with
    layoutx): ``layers`` = {layer index: LayerConfig}; tensors under the weight map's names and
    layout; projections N(0, s^2) with s = max(0.02, 0.9 / sqrt(fan_in)) and norms
    1 + N(0, 0.05^2), the scales of layoutx's seeded weights (model/numerics/weights.h)."""
    wm = load_weight_map(weight_map) if isinstance(weight_map, str) else weight_map
    rng = np.random.default_rng(seed)
    tensors = {}
    for index, config in layers.items():
        for role, shape in config.weight_shapes.items():
            if role in PROJECTIONS:
                a = rng.normal(0.0, max(0.02, 0.9 / math.sqrt(shape[0])), size=shape)
                a = a.T if wm["linear_layout"] == "out_in" else a
            else:
                a = 1.0 + rng.normal(0.0, 0.05, size=shape) - wm["norm_offset"]
            tensors[wm["tensors"][role].replace("{i}", str(index))] = a.astype(np.float32)
    write_safetensors(path, tensors)


def load_weight_map(path):
    """The weight map YAML (configs/models/<model>.weights.yaml): linear_layout, norm_offset,
    tensors {role: name with {i}}."""
    import yaml

    with open(path) as f:
        m = yaml.safe_load(f)
    return {"linear_layout": m.get("linear_layout", "out_in"), "norm_offset": float(m.get("norm_offset", 0.0)),
            "tensors": m["tensors"]}


def load_safetensors(path, weight_map, layer_index):
    """One layer's weights {role: array} in the graph's layouts, read as layoutx reads them:
    nn.Linear's [out, in] transposed when linear_layout is out_in; norm_offset added to norms."""
    wm = load_weight_map(weight_map) if isinstance(weight_map, str) else weight_map
    tensors = read_safetensors(path)
    out = {}
    for role, name in wm["tensors"].items():
        name = name.replace("{i}", str(layer_index))
        if name not in tensors:
            continue  # e.g. g_proj for a layer without a head gate; DecodeLayer names what is missing
        a = tensors[name].astype(np.float32)
        if role in PROJECTIONS and wm["linear_layout"] == "out_in":
            a = a.T
        if role in NORMS:
            a = a + np.float32(wm["norm_offset"])
        out[role] = np.ascontiguousarray(a)
    return out
