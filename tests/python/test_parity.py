"""Parity of layoutx.torch with layoutx's executor and of its ONNX export with layoutx's emitted
ONNX, over every meaningful variant of one model's layer type and every exporter form (issue 34)
on each preset (parity.py says how); layoutx.torch_quant's codes by their properties.

    python3 test_parity.py MODEL LAYER CTX STEPS PRECISIONS [unittest args]   (PRECISIONS: fp16,w4a16)

STEPS must wrap a sliding ring at least twice (> 2 (window - 1)); a full layer that appends
takes at most ctx tokens. Prints the parity table. Needs the built package on PYTHONPATH."""
import itertools
import math
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import torch

import layoutx
import layoutx.ort
from layoutx import torch as lxt
from layoutx import torch_quant as lxt_quant

import parity

MODEL, LAYER, CTX, STEPS = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# Quantized precisions are the same float graph (README "Why float32"); the mask value of an
# unwritten slot differs (-1e4 / -100), which the runtime and the layer must agree on.
PRECISIONS = sys.argv[5].split(",")
del sys.argv[1:6]
MIN_SNR_DB = 120.0  # float32 against float32: a wrong op or cache contract is far below this
FORM_OPS = ("Conv", "MatMul", "Softmax", "Concat")  # op types whose counts the forms set


class Parity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Each variant's bundle is hundreds of small files written with fsync: on tmpfs when
        # there is one, where fsync costs nothing (removed at the end either way).
        shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        cls.work = tempfile.mkdtemp(prefix="layoutx-parity-", dir=shm)
        cls.config = lxt.LayerConfig.of(model=MODEL, layer=LAYER, ctx=CTX)
        cls.layer_index = 0 if LAYER == "sliding" else 3  # full_every 4 in both test models
        cls.ckpt = os.path.join(cls.work, "layer.safetensors")
        parity.random_checkpoint(cls.ckpt, cls.config, cls.layer_index, seed=7)
        reason = layoutx.ort.unavailable_reason()
        cls.ort = None if reason else layoutx.ort.Session()
        cls.ort_reason = reason

    @classmethod
    def tearDownClass(cls):
        if cls.ort:
            cls.ort.close()
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_ring_wraps_twice(self):
        if LAYER == "sliding":
            self.assertGreater(STEPS, 2 * self.config.cache_entries)

    def check_rows(self, keys, steps_of, tag):
        """Checks each variant key (PyTorch vs executor, and with ORT the exports) and returns the rows."""
        rows = []
        for i, key in enumerate(keys):
            steps = steps_of(key)
            work = os.path.join(self.work, f"{tag}-{i}")
            onnx_steps = sorted({0, steps // 2, steps - 1})
            row = parity.check_variant(MODEL, LAYER, CTX, key, steps, self.ckpt, self.layer_index, work, self.ort,
                                       onnx_steps)
            shutil.rmtree(work)
            rows.append(row)
            with self.subTest(variant=key):
                self.assertGreaterEqual(row.hidden_snr, MIN_SNR_DB)
                self.assertGreaterEqual(row.kv_snr, MIN_SNR_DB)
                self.assertLess(row.inputs_max_err, 1e-5)  # same cache, mask and rotary tables
                if self.ort:
                    self.assertGreaterEqual(row.onnx_snr, MIN_SNR_DB)
                    self.assertGreaterEqual(row.onnx_kv_snr, MIN_SNR_DB)
                    # The export has the form's op structure, not only its function: as many
                    # Convs (projection=conv1x1), MatMuls, Softmaxes (one per query head with
                    # heads=per_head) and Concats as layoutx's ONNX.
                    for op in FORM_OPS:
                        self.assertEqual(row.torch_onnx_ops.get(op, 0), row.onnx_ops.get(op, 0), op)
        return rows

    def print_table(self, title, rows):
        fmt = lambda x: "-" if x is None else ("inf" if math.isinf(x) else f"{x:.1f}")
        print(f"\n{title}: {MODEL} {LAYER} ctx {CTX}, cache {self.config.cache_entries} (sliding_cache=context: ctx-1) "
              f"(PyTorch vs executor; torch.onnx.export vs layoutx ONNX in ORT on the first, middle and last steps)")
        w = max(len(r.variant_key) for r in rows)
        print(f"{'variant':<{w}} {'steps':>5} {'SNR dB':>7} {'K/V dB':>7} {'ONNX dB':>7} {'ONNX K/V':>8}  export's ops")
        for r in rows:
            ops = " ".join(f"{op} {r.torch_onnx_ops.get(op, 0)}" for op in FORM_OPS) if r.torch_onnx_ops else "-"
            print(f"{r.variant_key:<{w}} {r.steps:>5} {fmt(r.hidden_snr):>7} {fmt(r.kv_snr):>7} {fmt(r.onnx_snr):>7} "
                  f"{fmt(r.onnx_kv_snr):>8}  {ops}")
        print(f"worst: SNR {fmt(min(r.hidden_snr for r in rows))} dB, K/V {fmt(min(r.kv_snr for r in rows))} dB"
              + (f", ONNX {fmt(min(r.onnx_snr for r in rows))} dB" if self.ort else ""))

    def test_every_variant(self):
        if self.ort is None:
            print(f"ONNX comparison skipped: {self.ort_reason}")
        rows = []
        for precision in PRECISIONS:
            keys = parity.meaningful_variants(MODEL, LAYER, CTX, precision)
            self.assertEqual(len(keys), 40, "the README's 40 meaningful variants per precision")
            rows += self.check_rows(keys, lambda key: STEPS, precision)
        self.print_table("parity", rows)

    def test_exporter_forms(self):
        # Issue 34's forms, each on each preset and combined; a full-length sliding cache
        # (sliding_cache=context, ctx-1 slots) runs until its ring has wrapped once as well, so
        # both the window mask by age and the ring write are in the history.
        rows = []
        context_steps = max(STEPS, CTX - 1 + 3) if LAYER == "sliding" else STEPS
        steps_of = lambda key: context_steps if "sliding_cache=context" in key else STEPS
        for precision in PRECISIONS:
            cases = parity.exporter_variants(MODEL, LAYER, CTX, precision)
            forms = {s for _, sets in cases for s in sets}
            expected = {f"{a}={v}" for a, vs in parity.EXPORTER_FORMS.items() for v in vs
                        if precision == "w4a16" or a != "weight_quant"}
            self.assertEqual(forms, expected, "every exporter form is checked")
            rows += self.check_rows([key for key, _ in cases], steps_of, f"forms-{precision}")
        self.print_table("parity of the exporter forms", rows)

    def run_history(self, key, steps, edit=None, **layer_options):
        """The PyTorch layer of `key` over the executor's token history (emit's samples, float
        graph), its config changed by `edit` when given; returns (executor hidden_out, PyTorch
        hidden_out, runtime, module)."""
        work = os.path.join(self.work, "history")
        doc = layoutx.emit(model=MODEL, layer=LAYER, ctx=CTX, layout=key, out=work, weights=self.ckpt,
                           weight_map=parity.WEIGHT_MAP, layer_index=self.layer_index, calibration_samples=steps)
        config = lxt.LayerConfig.of(model=MODEL, layer=LAYER, ctx=CTX, layout=key)
        if edit:
            edit(config)
        module = lxt.DecodeLayer(config, lxt.load_safetensors(self.ckpt, parity.WEIGHT_MAP, self.layer_index),
                                 **layer_options)
        runtime = lxt.Runtime(config)
        ref, got = [], []
        with torch.no_grad():
            for t in range(steps):
                sample, expected = parity.load_sample(doc["bundles"][0]["dir"], t)
                y, k, v = module(*runtime.inputs(sample["hidden_in"]))
                runtime.absorb(k, v)
                ref.append(expected["hidden_out"]); got.append(y.numpy())
        shutil.rmtree(work)
        return np.concatenate(ref), np.concatenate(got), runtime, module

    def test_quantized_codes(self):
        # The codes layoutx.torch_quant simulates on top of the float graph (the executor's
        # float history is the reference): a u8 cache with calibrated, tied encodings, and 4-bit
        # weights per channel or in LPBQ blocks. Not an executor comparison (no verb hands out
        # the executor's simulated codes): properties that can fail, and the SNR figures.
        steps = min(STEPS, CTX - 1)
        figures = []
        for precision in PRECISIONS:
            for preset, heads in itertools.product(parity.PRESETS, ("grouped", "per_head")):
                key = layoutx.graph(model=MODEL, layer=LAYER, ctx=CTX, layout=preset,
                                    set=["kv_dtype=u8", f"heads={heads}"], precision=precision)["variant_key"]
                observed = {}
                self.run_history(key, steps, observe=observed)
                config = lxt.LayerConfig.of(model=MODEL, layer=LAYER, ctx=CTX, layout=key)
                codes = lxt_quant.CacheCodes(config, lxt_quant.calibrate_cache_ranges(config, observed))
                ref, got, runtime, _ = self.run_history(key, steps, cache_codes=codes)
                snr = parity.snr_db(ref, got)
                figures.append((key, snr))
                with self.subTest(variant=key):
                    # Tied encodings: the cache holds codes (the runtime copied them, nothing
                    # requantized); heads=per_head in a quantized graph: each KV head's own.
                    for cache, kind in ((runtime.k_cache, "k"), (runtime.v_cache, "v")):
                        for j in range(config.kv_heads):
                            name = (f"out/{kind}_out/quantize" if precision == "fp16" else
                                    f"attn/kv{j}/{kind}_new/to_cache" if config.per_head else f"attn/{kind}_new/to_cache")
                            c = cache[j].double() / codes.scales[name]
                            self.assertLess(float((c - c.round()).abs().max()), 1e-3)
                            self.assertLessEqual(float(c.abs().max()), 128.0)
                    self.assertTrue(20.0 < snr < 100.0, f"u8 cache SNR {snr:.1f} dB")
            if precision != "w4a16":
                continue
            key = layoutx.graph(model=MODEL, layer=LAYER, ctx=CTX, layout="ring", precision=precision)["variant_key"]
            by_form = {}
            for form in lxt_quant.BLOCKS:
                k = key if form == "per_channel" else key + f",weight_quant={form}"
                ref, got, _, module = self.run_history(k, steps, quantize_weights=True)
                by_form[form] = parity.snr_db(ref, got)
                if form == "block64":
                    grouped_block64 = got  # the grouped MatMuls' layer, for the per-head Convs below
                figures.append((k, by_form[form]))
                # LPBQ's bound: every weight within half its block's step (nothing clipped).
                w = module.q_k_v_proj.double()
                raw = torch.as_tensor(lxt.load_safetensors(self.ckpt, parity.WEIGHT_MAP, self.layer_index)["q_k_v_proj"])
                step = (lxt_quant.lpbq_steps(raw.double(), lxt_quant.BLOCKS[form]) if form != "per_channel"
                        else (raw.double().abs().amax(dim=0, keepdim=True) / 7).expand_as(raw))
                self.assertLessEqual(float(((w - raw.double()).abs() - step / 2).max()), 1e-6)
            # The exporters' per-head 1x1 Convs take the same quantized values as the grouped
            # MatMuls (quantized as [in, out], then laid out): the same function in float32.
            k = layoutx.graph(model=MODEL, layer=LAYER, ctx=CTX, layout="ring", precision=precision,
                              set=["weight_quant=block64", "heads=per_head", "projection=conv1x1"])["variant_key"]
            ref_conv, got_conv, _, _ = self.run_history(k, steps, quantize_weights=True)
            self.assertGreater(parity.snr_db(grouped_block64, got_conv), MIN_SNR_DB)
            figures.append((k, parity.snr_db(ref_conv, got_conv)))
            # Smaller blocks, finer steps (block64 may equal per-channel where in <= 64 rows).
            self.assertGreater(by_form["block16"], by_form["block32"])
            self.assertGreater(by_form["block32"], by_form["block64"])
            self.assertGreaterEqual(by_form["block64"], by_form["per_channel"] - 0.5)
        print(f"\nquantized codes: {MODEL} {LAYER} ctx {CTX}, {steps} steps, hidden_out SNR vs the executor's float graph")
        for key, snr in figures:
            print(f"{key:<90} {snr:7.1f} dB")

    def test_u8_codes_match_quantize_linear(self):
        # torch_quant's u8 encoding is ONNX's QuantizeLinear -> DequantizeLinear (uint8, zero
        # point 128), which layoutx's QDQ ONNX emits and whose codes the executor's simulation
        # matches (tests/emit OrtQdq): ties round to even, out-of-range values saturate.
        if self.ort is None:
            self.skipTest(self.ort_reason)
        scale = 0.0625  # a power of two: every tie below is exact in float32
        ties = (torch.arange(-140, 140, dtype=torch.float32) + 0.5) * scale
        x = torch.cat([ties, torch.randn(500, generator=torch.Generator().manual_seed(3)) * 5, torch.tensor([0.0, -0.0])])

        class Qdq(torch.nn.Module):
            def forward(self, x):
                return torch.fake_quantize_per_tensor_affine(x, scale, 128, 0, 255)

        path = os.path.join(self.work, "qdq.onnx")
        torch.onnx.export(Qdq(), (x,), path, input_names=["x"], output_names=["y"], opset_version=17)
        theirs = self.ort.run(path, {"x": x.numpy()})["y"]
        mine = lxt_quant.quantize_u8_symmetric(x, scale).numpy()
        self.assertTrue(np.array_equal(mine, theirs), f"max diff {np.max(np.abs(mine - theirs))}")
        # u8_scale is the float32 scale of max(|lo|, |hi|) / 127; an empty range leaves x as is.
        self.assertEqual(lxt_quant.u8_scale(-2.54, 1.0), float(np.float32(2.54 / 127)))
        self.assertIs(lxt_quant.quantize_u8_symmetric(x, lxt_quant.u8_scale(0.0, 0.0)), x)

    def test_a_wrong_window_mask_fails(self):
        # The window mask by age can fail: a full-length sliding cache played without it (the
        # layer's window taken as 0) against the executor's history.
        if LAYER != "sliding":
            self.skipTest("a full layer has no window")
        key = layoutx.graph(model=MODEL, layer=LAYER, ctx=CTX, layout="ring", set=["sliding_cache=context"])["variant_key"]
        steps = max(STEPS, CTX - 1 + 3)
        ref, got, _, _ = self.run_history(key, steps)
        self.assertGreater(parity.snr_db(ref, got), MIN_SNR_DB)
        ref, got, _, _ = self.run_history(key, steps, edit=lambda c: setattr(c, "window", 0))
        self.assertLess(parity.snr_db(ref, got), 60.0)

    def test_an_unknown_form_is_refused(self):
        # A form the document names that layoutx.torch does not compute (a new axis, or a new
        # value of a known one) is refused by name, not computed as the default.
        doc = layoutx.graph(model=MODEL, layer=LAYER, ctx=CTX, layout="ring")
        for axis, value in (("heads", "per_kv_head"), ("projection", "conv3x3"), ("softmax", "fancy"), ("unheard", "x")):
            changed = dict(doc, axes=dict(doc["axes"], **{axis: value}))
            with self.assertRaisesRegex(layoutx.Error, f"{axis}={value} is not mirrored"):
                lxt.LayerConfig(changed)

    def test_a_wrong_cache_contract_fails(self):
        # The check can fail: a runtime that leaves unwritten slots unmasked (mask value 0)
        # against the executor's history, over the steps before the cache is full.
        work = os.path.join(self.work, "wrong")
        steps = min(STEPS, self.config.cache_entries)
        doc = layoutx.emit(model=MODEL, layer=LAYER, ctx=CTX, layout="ring", out=work, weights=self.ckpt,
                           weight_map=parity.WEIGHT_MAP, layer_index=self.layer_index, calibration_samples=steps)
        wrong = lxt.LayerConfig.of(model=MODEL, layer=LAYER, ctx=CTX, layout="ring")
        wrong.mask_value = 0.0
        module = lxt.DecodeLayer(wrong, lxt.load_safetensors(self.ckpt, parity.WEIGHT_MAP, self.layer_index))
        runtime = lxt.Runtime(wrong)
        ref, got = [], []
        with torch.no_grad():
            for t in range(steps):
                sample, expected = parity.load_sample(doc["bundles"][0]["dir"], t)
                y, k, v = module(*runtime.inputs(sample["hidden_in"]))
                runtime.absorb(k, v)
                ref.append(expected["hidden_out"]); got.append(y.numpy())
        self.assertLess(parity.snr_db(np.concatenate(ref), np.concatenate(got)), 60.0)

    def test_a_wrong_export_fails(self):
        # The ONNX comparison can fail: the tanh GELU form exported, against layoutx's erf ONNX.
        if self.ort is None:
            self.skipTest(self.ort_reason)
        work = os.path.join(self.work, "wrong_onnx")
        doc = layoutx.emit(model=MODEL, layer=LAYER, ctx=CTX, layout="ring", out=work, weights=self.ckpt,
                           weight_map=parity.WEIGHT_MAP, layer_index=self.layer_index, calibration_samples=2)
        wrong = lxt.LayerConfig.of(model=MODEL, layer=LAYER, ctx=CTX, layout="ring", set=["gelu=tanh"])
        module = lxt.DecodeLayer(wrong, lxt.load_safetensors(self.ckpt, parity.WEIGHT_MAP, self.layer_index))
        sample, _ = parity.load_sample(doc["bundles"][0]["dir"], 1)
        names = module.input_names()
        exported = os.path.join(work, "wrong.onnx")
        module.export_onnx(exported, [sample[n] for n in names])
        feeds = {n: sample[n] for n in names}
        theirs = self.ort.run(doc["bundles"][0]["onnx"], feeds)["hidden_out"]
        mine = self.ort.run(exported, feeds)["hidden_out"]
        self.assertLess(parity.snr_db(theirs, mine), 100.0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
