"""The codes of the exporters' quantized forms (issue 34) for ``layoutx.torch``, simulated in
floating point as layoutx's executor does (model/numerics/quantize.{h,cc}): a value becomes the
value its integer code stands for.

  kv_dtype=u8         symmetric uint8 with offset 128: scale = max(|lo|, |hi|) / 127 (float32,
                      as ONNX's QuantizeLinear holds it), code = clamp(round(x / scale), -128,
                      127) + 128, round half to even. The new entry's quantizer is the cache's
                      (tied), so the runtime copies codes: a stored entry is never requantized.
  kv_dtype=u16        16-bit fixed point I/O; the float graph and the executor's float path
                      treat it as exact (no codes here).
  weight_quant=blockB LPBQ 4-bit weights of a [in, out] projection: per output column c and
                      block b of B input rows, s_cb = max|w| / 7, S_c = max_b s_cb / 16,
                      k_cb = clamp(ceil(s_cb / S_c), 1, 16), code = clamp(round(w / (k_cb S_c)),
                      -8, 7). per_channel: scale_c = max|w[:, c]| / 7, code in [-7, 7].

``CacheCodes`` is the cache side: the u8 Converts of the graph document by name, each with its
calibrated range (the emitted QDQ ONNX's encodings). ``quantize_projection`` is the weight
side. Both are optional inputs of ``DecodeLayer``; without them the layer is the float graph.
"""
import math

import numpy as np
import torch

import layoutx

# The weight_quant axis's block sizes (input rows per block); per_channel has none.
BLOCKS = {"per_channel": 0, "block16": 16, "block32": 32, "block64": 64}


def u8_scale(lo, hi):
    """The u8 cache encoding's scale of a calibrated range (float32, as stored), or None when the
    range is empty or not finite (the values then pass unchanged, as the executor leaves them)."""
    a = max(abs(float(lo)), abs(float(hi)))
    if not (a > 0) or not math.isfinite(a):
        return None
    return float(np.float32(a / 127.0))


def quantize_u8_symmetric(x, scale):
    """x -> (code - 128) * scale with code = clamp(round_half_even(x / scale), -128, 127) + 128;
    computed in float64 and returned in x's dtype (NaN stays NaN)."""
    if scale is None:
        return x
    y = torch.clamp(torch.round(x.double() / scale), -128.0, 127.0) * scale
    return y.to(x.dtype)


def u8_codes(x, scale):
    """The uint8 codes (0..255) of x under the encoding: what the runtime stores and copies."""
    return (torch.clamp(torch.round(x.double() / scale), -128.0, 127.0) + 128).to(torch.uint8)


class CacheCodes:
    """The u8 cache encodings of one graph: {Convert op name: scale}, from calibrated ranges
    {op name: (lo, hi)} of the graph's u8 Converts (``LayerConfig.u8_converts``). A quantized
    graph (w8a16, w4a16) quantizes the new entry once (``attn/k_new/to_cache``,
    ``attn/v_new/to_cache``) and reads the cache as it is; an fp16 graph quantizes its outputs
    (``out/k_out/quantize``, ``out/v_out/quantize``)."""

    def __init__(self, config, ranges):
        missing = [n for n in config.u8_converts if n not in ranges]
        if missing:
            raise layoutx.Error(f"layoutx.torch_quant: no calibrated range for the u8 Convert(s) {missing}")
        self.scales = {n: u8_scale(*ranges[n]) for n in config.u8_converts}

    def __call__(self, name, x):
        """x through the Convert `name` when the graph has it, else x unchanged."""
        return quantize_u8_symmetric(x, self.scales[name]) if name in self.scales else x


def calibrate_cache_ranges(config, observed):
    """{u8 Convert name: (lo, hi)} from the float graph's observed values {name: [tensors]}
    (``DecodeLayer(..., observe=dict)`` over a history): the range with 0, as calibration takes
    it (model/numerics/quantize.h u16_range)."""
    out = {}
    for name in config.u8_converts:
        xs = observed.get(name, [])
        lo = min([0.0] + [float(x.min()) for x in xs])
        hi = max([0.0] + [float(x.max()) for x in xs])
        out[name] = (lo, hi)
    return out


def lpbq_steps(w, block):
    """The per-element LPBQ step k_cb S_c of a [in, out] float64 weight (see the docstring)."""
    rows, cols = w.shape
    blocks = -(-rows // block)
    pad = blocks * block - rows
    a = torch.nn.functional.pad(w.abs(), (0, 0, 0, pad)).reshape(blocks, block, cols)
    s = a.amax(dim=1) / 7.0  # [blocks, cols], the blocks' own min-max scales
    S = s.amax(dim=0) / 16.0  # [cols], the per-channel float scale
    safe = torch.where(S > 0, S, torch.ones_like(S))
    # A relative 1e-12 keeps a block whose scale is exactly k S at k (as the executor does).
    k = torch.clamp(torch.ceil(s / safe * (1 - 1e-12)), 1.0, 16.0)
    step = torch.where(S > 0, k * S, torch.zeros_like(s))
    return step.repeat_interleave(block, dim=0)[:rows]


def quantize_projection(w, weight_quant, bits=4):
    """A [in, out] projection's values under weight_quant (per_channel or blockB) with `bits`
    (4; 8 is always per channel, qmax 127), in w's dtype; codes computed in float64 as the
    executor does."""
    if weight_quant not in BLOCKS:
        raise layoutx.Error(f"layoutx.torch_quant: unknown weight_quant '{weight_quant}' (allowed: {', '.join(BLOCKS)})")
    if bits not in (4, 8):
        raise layoutx.Error(f"layoutx.torch_quant: weight bits must be 4 or 8, got {bits}")
    w64 = torch.as_tensor(w).double()
    block = BLOCKS[weight_quant] if bits == 4 else 0
    qmax = 7.0 if bits == 4 else 127.0
    if block:
        step, lo = lpbq_steps(w64, block), -8.0
    else:
        step, lo = (w64.abs().amax(dim=0, keepdim=True) / qmax).expand_as(w64), -qmax
    safe = torch.where(step > 0, step, torch.ones_like(step))
    q = torch.where(step > 0, torch.clamp(torch.round(w64 / safe), lo, qmax) * step, torch.zeros_like(w64))
    return q.to(torch.as_tensor(w).dtype)
