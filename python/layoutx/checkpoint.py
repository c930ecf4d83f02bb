"""One layer's weights from a safetensors checkpoint, through layoutx's weight map
(configs/models/<model>.weights.yaml), in the layer graph's layouts (projections [in, out],
norms [H]), as ``layoutx emit --weights`` reads them; and random checkpoints for tests and
examples. ``layoutx.torch`` re-exports these names."""
import json
import math
import struct

import numpy as np

import layoutx

# Roles of the layer's parameters, in the graph's layouts: projections [in, out], norms [H].
PROJECTIONS = ("q_k_v_proj", "g_proj", "out_proj", "gate_proj", "up_proj", "down_proj")
NORMS = ("input_layernorm", "post_attention_layernorm")

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
