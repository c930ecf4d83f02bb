"""The PyTorch layer (layoutx.torch) against layoutx's executor, and its ONNX export against
layoutx's emitted ONNX in ONNX Runtime, for one model's layer type over every meaningful variant.

Per variant: a random float32 checkpoint (written once per layer type, through the shipped
weight map) feeds both sides. `layoutx.emit --weights` writes the ONNX and the bundle whose
calibration samples hold the executor's runtime-simulated history: each step's inputs and,
under expected/, its outputs. The PyTorch layer runs the same token history with its own
Runtime playing the cache, so the layer and the cache contract are both checked, step by step.
"""
import itertools
import math
import os

import numpy as np
import torch

import layoutx
import layoutx.ort
from layoutx import torch as lxt

CONFIGS = os.path.join(os.path.dirname(__file__), "..", "..", "configs")
WEIGHT_MAP = os.path.join(CONFIGS, "models", "spark-x2.5-1.7b.weights.yaml")

# The axes and their values, to enumerate the design space; layoutx itself rejects the
# meaningless combinations (e.g. new_score under join=keys) and names each variant.
AXES = {
    "returns": ["window", "new_entry"],
    "join": ["keys", "scores"],
    "softmax": ["fused", "explicit"],
    "new_score": ["matmul", "mul_reducesum"],
    "new_value": ["matmul", "broadcast_mul"],
    "gelu": ["erf", "tanh"],
}


def meaningful_variants(model, layer, ctx, precision):
    """Variant keys layoutx accepts, deduplicated (its canonical key names each once)."""
    keys = []
    for values in itertools.product(*AXES.values()):
        sets = [f"{a}={v}" for a, v in zip(AXES, values)]
        try:
            doc = layoutx.graph(model=model, layer=layer, ctx=ctx, layout="roll", set=sets, precision=precision)
        except layoutx.Error:
            continue
        if doc["variant_key"] not in keys:
            keys.append(doc["variant_key"])
    return keys


# The exporters' forms (issue 34): unpriced axes, so layoutx's variants() keeps them at their
# defaults and the product above never reaches them; each value is checked off its default on
# each preset, and one exporter's layout combines them. weight_quant applies to w4a16 only.
EXPORTER_FORMS = {
    "kv_dtype": ["u8", "u16"],
    "k_layout": ["rows"],
    "softmax": ["masked"],
    "sliding_cache": ["context"],
    "weight_quant": ["block16", "block32", "block64"],
    "heads": ["per_head"],
    "projection": ["conv1x1"],
}
PRESETS = ("roll", "ring", "score-join")
# What the exporters ship (htp-facts.md): an 8-bit cache, K as rows, the masked softmax, one
# full-length cache shape, block-64 4-bit weights (at w4a16), one op chain per head and each
# projection a 1x1 Conv; and the same layout with grouped heads and MatMul projections.
EXPORTER_LAYOUT = ["kv_dtype=u8", "k_layout=rows", "softmax=masked", "sliding_cache=context", "heads=per_head",
                   "projection=conv1x1"]
EXPORTER_LAYOUT_GROUPED = EXPORTER_LAYOUT[:4]


def exporter_variants(model, layer, ctx, precision):
    """(variant key, the forms it sets) of every exporter form on every preset, and the combined
    exporter layouts (per-head with 1x1 Convs, and grouped with MatMuls) on each preset;
    deduplicated by key. A value layoutx refuses at this precision (weight_quant off w4a16) is
    left out; any other refusal is an error."""
    cases = [(preset, [f"{axis}={value}"]) for axis, values in EXPORTER_FORMS.items() for value in values
             for preset in PRESETS]
    block = ["weight_quant=block64"] if precision == "w4a16" else []
    cases += [(preset, layout + block) for layout in (EXPORTER_LAYOUT_GROUPED, EXPORTER_LAYOUT) for preset in PRESETS]
    keys = []
    for preset, sets in cases:
        if precision != "w4a16" and any(s.startswith("weight_quant=") for s in sets):
            continue
        doc = layoutx.graph(model=model, layer=layer, ctx=ctx, layout=preset, set=sets, precision=precision)
        if doc["variant_key"] not in [k for k, _ in keys]:
            keys.append((doc["variant_key"], sets))
    return keys


def snr_db(ref, x):
    ref, x = np.asarray(ref, np.float64), np.asarray(x, np.float64)
    noise = np.sum((x - ref) ** 2)
    return math.inf if noise == 0 else 10 * math.log10(np.sum(ref**2) / noise)


def _fields(buf):
    """(field number, value) of a protobuf message's fields: bytes for length-delimited ones."""
    i = 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]; i += 1
            v |= (b & 0x7F) << shift; shift += 7
            if b < 0x80:
                return v
    while i < len(buf):
        key = varint()
        kind = key & 7
        if kind == 0:
            yield key >> 3, varint()
        elif kind in (1, 5):
            i += 8 if kind == 1 else 4
        elif kind == 2:
            n = varint()
            yield key >> 3, buf[i : i + n]
            i += n
        else:
            raise ValueError(f"protobuf wire type {kind} at byte {i}")


def onnx_op_counts(path):
    """{op_type: count} of an ONNX file's main graph (ModelProto.graph = 7, GraphProto.node = 1,
    NodeProto.op_type = 4), read from the protobuf wire format (Debian has no onnx package)."""
    with open(path, "rb") as f:
        model = f.read()
    counts = {}
    for field, graph in _fields(model):
        if field != 7:
            continue
        for f_node, node in _fields(graph):
            if f_node == 1:
                for f_op, op in _fields(node):
                    if f_op == 4:
                        counts[op.decode()] = counts.get(op.decode(), 0) + 1
    return counts


def random_checkpoint(path, config, layer_index, seed):
    lxt.write_random_checkpoint(path, WEIGHT_MAP, {layer_index: config}, seed)


def load_sample(bundle_dir, step):
    d = os.path.join(bundle_dir, "calibration", f"sample_{step:03d}")
    return layoutx.ort.read_tensors(d), layoutx.ort.read_tensors(os.path.join(d, "expected"))


class Row:
    def __init__(self, variant_key, steps):
        self.variant_key, self.steps = variant_key, steps
        self.hidden_snr = self.kv_snr = self.inputs_max_err = self.onnx_snr = self.onnx_kv_snr = None
        self.onnx_ops = self.torch_onnx_ops = None  # {op_type: count} of layoutx's ONNX and of the export


def check_variant(model, layer, ctx, variant_key, steps, ckpt, layer_index, work, ort=None, onnx_steps=()):
    """One variant: PyTorch (eager, own runtime) vs the executor over `steps`; with `ort`, the
    torch.onnx.export of the layer vs layoutx's emitted ONNX in ORT on the samples `onnx_steps`."""
    config = lxt.LayerConfig.of(model=model, layer=layer, ctx=ctx, layout=variant_key)
    doc = layoutx.emit(model=model, layer=layer, ctx=ctx, layout=variant_key, out=work, weights=ckpt,
                       weight_map=WEIGHT_MAP, layer_index=layer_index, calibration_samples=steps)
    bundle = doc["bundles"][0]
    module = lxt.DecodeLayer(config, lxt.load_safetensors(ckpt, WEIGHT_MAP, layer_index))
    runtime = lxt.Runtime(config)
    names = module.input_names()
    ref, got, ref_kv, got_kv = [], [], [], []
    inputs_err = 0.0
    with torch.no_grad():
        for t in range(steps):
            sample, expected = load_sample(bundle["dir"], t)
            args = runtime.inputs(sample["hidden_in"])
            # The torch runtime's cache, mask and rotary tables vs the executor's runtime simulation.
            for name, a in zip(names, args):
                inputs_err = max(inputs_err, float(np.max(np.abs(a.numpy() - sample[name]))))
            y, k, v = module(*args)
            runtime.absorb(k, v)
            ref.append(expected["hidden_out"]); got.append(y.numpy())
            ref_kv += [expected["k_out"].ravel(), expected["v_out"].ravel()]
            got_kv += [k.numpy().ravel(), v.numpy().ravel()]
    row = Row(variant_key, steps)
    row.hidden_snr = snr_db(np.concatenate(ref), np.concatenate(got))
    row.kv_snr = snr_db(np.concatenate(ref_kv), np.concatenate(got_kv))
    row.inputs_max_err = inputs_err
    if ort is not None:
        exported = os.path.join(work, "torch.onnx")
        sample0, _ = load_sample(bundle["dir"], 0)
        module.export_onnx(exported, [sample0[n] for n in names])
        row.onnx_ops, row.torch_onnx_ops = onnx_op_counts(bundle["onnx"]), onnx_op_counts(exported)
        a, b = [], []
        for t in onnx_steps:
            sample, _ = load_sample(bundle["dir"], t)
            feeds = {n: sample[n] for n in names}
            mine, theirs = ort.run(exported, feeds), ort.run(bundle["onnx"], feeds)
            a.append(theirs); b.append(mine)
        row.onnx_snr = snr_db(np.concatenate([x["hidden_out"].ravel() for x in a]),
                              np.concatenate([x["hidden_out"].ravel() for x in b]))
        row.onnx_kv_snr = snr_db(np.concatenate([x[n].ravel() for x in a for n in ("k_out", "v_out")]),
                                 np.concatenate([x[n].ravel() for x in b for n in ("k_out", "v_out")]))
    return row
