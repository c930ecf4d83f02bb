#!/usr/bin/env python3
"""An export script that lets layoutx choose the whole-model layout.

1. ``layoutx.propose``: the whole-model layout for the model at a precision and context
   (Spark-X2.5-1.7B, w4a16, 4096 by default): each layer type's layout and the parts (context
   binaries) the layers go into, written as the exporter's layout file with its model_layout
   block.
2. ``layoutx.torch``: each layer type built in its chosen variant from the layout file's entry,
   with its weights (a safetensors checkpoint through the model's weight map; without one, a
   random checkpoint of the layers used, since no Spark weights ship with layoutx).
3. ``torch.onnx.export`` of each layer type, validated in ONNX Runtime: a token history run with
   layoutx.torch.Runtime playing the cache, ORT against the eager layer at every step, and ORT
   on layoutx's own emitted ONNX of the same variant on the same inputs.
4. ``layoutx.emit``: the device job bundle of every layer type of the layout file.
5. The parts: ``layoutx.emit(parts=True)`` writes each part of the proposal as one graph with its
   bundle; the script builds the same part from its layers (``layoutx.torch.Part``), exports it
   with ``torch.onnx.export`` and runs both in ONNX Runtime on the part's calibration samples.
   (A model whose float32 layers are over emit's 2 GiB cap, Spark at full size, is not built.)

    PYTHONPATH=build/python python3 examples/export_with_layoutx.py --out /tmp/export
    (--model tests/python/models/spark-attention.yaml: Spark's attention at reduced widths)
"""
import argparse
import math
import os
import sys
import tempfile

import numpy as np
import torch
import yaml

import layoutx
import layoutx.ort
from layoutx import torch as lxt

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MAP = os.path.join(HERE, "..", "configs", "models", "spark-x2.5-1.7b.weights.yaml")


def snr_db(ref, x):
    ref, x = np.concatenate([np.ravel(a) for a in ref]), np.concatenate([np.ravel(a) for a in x])
    noise = float(np.sum((x.astype(np.float64) - ref) ** 2))
    return math.inf if noise == 0 else 10 * math.log10(float(np.sum(ref.astype(np.float64) ** 2)) / noise)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="spark-x2.5-1.7b", help="a shipped model, a .yaml spec or a HF config.json")
    ap.add_argument("--precision", default="w4a16")
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--weights", help="safetensors checkpoint (default: a random one of the layers used)")
    ap.add_argument("--weight-map", default=DEFAULT_MAP)
    ap.add_argument("--steps", type=int, default=8, help="decode steps validated in ONNX Runtime")
    ap.add_argument("--out", help="output folder (default: a temporary one, removed at the end)")
    a = ap.parse_args()
    reason = layoutx.ort.unavailable_reason()
    if reason:  # 77: "skipped" to CTest
        print(f"export_with_layoutx: ONNX Runtime is unavailable ({reason}); nothing exported", file=sys.stderr)
        raise SystemExit(77)
    if a.out is None:
        with tempfile.TemporaryDirectory(prefix="layoutx-export-") as a.out:
            return export(a)
    os.makedirs(a.out, exist_ok=True)
    return export(a)


def export(a):
    # 1. layoutx proposes the whole-model layout: each layer type's layout and the parts (context
    #    binaries) the layers are grouped into, written as the layout file with its model_layout block.
    layout_path = os.path.join(a.out, "layout.yaml")
    chosen = layoutx.propose(model=a.model, precision=a.precision, ctx=a.ctx, out=layout_path)
    with open(layout_path) as f:
        layout = yaml.safe_load(f)
    first_index = {}
    for entry in layout["layers"]:
        first_index.setdefault(entry["type"], entry["index"])
    p, b = chosen["proposal"], chosen["baseline"]
    print(f"layoutx.propose: {chosen['model']} {chosen['precision']} ctx {chosen['ctx']} on {chosen['device']}: "
          f"{p['tokens_per_s']:.1f} tokens/s [{p['tokens_per_s_interval'][0]:.1f}, {p['tokens_per_s_interval'][1]:.1f}] "
          f"in {len(p['parts'])} context binar{'y' if len(p['parts']) == 1 else 'ies'}, against {b['tokens_per_s']:.1f} for the team's default")
    for part in layout["model_layout"]["parts"]:
        print(f"  part {part['name']}: layers {part['layers']}, {part['weight_bytes'] / 2**20:.1f} MiB of weights")

    # 2. Each layer type in its chosen variant, from the layout file's entry.
    configs = {t: lxt.LayerConfig.of(model=a.model, layer=t, ctx=layout["context"], layout=e["variant_key"])
               for t, e in layout["defaults"].items()}
    # The parts are built when the model's float32 layers fit emit's cap (the random checkpoint
    # then holds every layer; otherwise the first of each type, for steps 2-4).
    layer_bytes = {t: 4 * sum(math.prod(s) for s in c.weight_shapes.values()) for t, c in configs.items()}
    model_bytes = sum(layer_bytes[e["type"]] for e in layout["layers"])
    build_parts = model_bytes <= 2**31
    ckpt = a.weights
    if ckpt is None:
        ckpt = os.path.join(a.out, "random.safetensors")
        layers = ({e["index"]: configs[e["type"]] for e in layout["layers"]} if build_parts
                  else {first_index[t]: c for t, c in configs.items()})
        lxt.write_random_checkpoint(ckpt, a.weight_map, layers, seed=1)

    # 4 (first, so step 3 can compare with it). layoutx's own ONNX and job bundle per layer type.
    emitted = layoutx.emit(model=a.model, select=layout_path, out=os.path.join(a.out, "bundle"), weights=ckpt,
                           weight_map=a.weight_map, calibration_samples=a.steps)
    bundles = {b["layer"]: b for b in emitted["bundles"]}

    rows = []
    with layoutx.ort.Session() as ort:
        for layer_type, config in configs.items():
            module = lxt.DecodeLayer(config, lxt.load_safetensors(ckpt, a.weight_map, first_index[layer_type]))
            names = module.input_names()
            # 3. Export, then validate: ORT against the eager layer over a token history (each
            #    side with its own Runtime playing the cache), and against layoutx's ONNX.
            onnx_path = os.path.join(a.out, f"{layer_type}_{layout['defaults'][layer_type]['preset'] or 'custom'}.onnx")
            module.export_onnx(onnx_path, lxt.Runtime(config).inputs(torch.zeros(config.hidden)))
            tokens = np.random.default_rng(2).standard_normal((a.steps, config.hidden)).astype(np.float32)
            eager_rt, ort_rt = lxt.Runtime(config), lxt.Runtime(config)
            eager, from_ort = [], []
            with torch.no_grad():
                for h in tokens:
                    y, k, v = module(*eager_rt.inputs(h))
                    eager_rt.absorb(k, v)
                    out = ort.run(onnx_path, {n: x.numpy() for n, x in zip(names, ort_rt.inputs(h))})
                    ort_rt.absorb(torch.from_numpy(out["k_out"]), torch.from_numpy(out["v_out"]))
                    eager.append(y.numpy()); from_ort.append(out["hidden_out"])
            mine, theirs = [], []
            for s in range(a.steps):
                sample = layoutx.ort.read_tensors(os.path.join(bundles[layer_type]["dir"], "calibration", f"sample_{s:03d}"))
                feeds = {n: sample[n] for n in names}
                mine.append(ort.run(onnx_path, feeds)["hidden_out"])
                theirs.append(ort.run(bundles[layer_type]["onnx"], feeds)["hidden_out"])
            rows.append((layer_type, config.variant_key, layout["defaults"][layer_type]["predicted_ms"], onnx_path,
                         os.path.getsize(onnx_path), snr_db(eager, from_ort), snr_db(theirs, mine)))

    print(f"\n{'layer':<8} {'chosen variant':<100} {'ms':>7} {'ONNX MB':>8} {'ORT vs eager dB':>16} "
          f"{'vs layoutx ONNX dB':>19}")
    for t, key, ms, path, size, s1, s2 in rows:
        print(f"{t:<8} {key:<100} {ms:>7.3f} {size / 2**20:>8.1f} {s1:>16.1f} {s2:>19.1f}")
    print(f"\n{a.steps} decode steps per layer type in ONNX Runtime; layout file {layout_path}")
    for b in emitted["bundles"]:
        print(f"layoutx.emit: {b['layer']}: {b['dir']} ({os.path.basename(b['onnx'])}, job.yaml, "
              f"{b['calibration_samples']} calibration samples; weights {b['weights']})")
    worst = min(min(r[5], r[6]) for r in rows)
    if build_parts:
        worst = min(worst, export_parts(a, layout_path, layout, configs, ckpt))
    else:
        print(f"\nthe parts are not built here: the model's layers take {model_bytes / 1e9:.2f} GB of float32 weights, "
              "over layoutx emit's 2 GiB cap (README, \"Limits\")")
    if worst < 100.0:
        raise SystemExit(f"export_with_layoutx: validation failed: worst SNR {worst:.1f} dB")


def export_parts(a, layout_path, layout, configs, ckpt):
    """5. Each part of the proposal: layoutx's part ONNX and bundle (emit --parts), the same part
    built in PyTorch from its layers and exported; both run in ORT on the bundle's calibration
    samples. Returns the worst SNR (dB) of the exported part against layoutx's and against eager."""
    emitted = layoutx.emit(model=a.model, select=layout_path, parts=True, out=os.path.join(a.out, "parts"), weights=ckpt,
                           weight_map=a.weight_map, calibration_samples=a.steps)
    type_of = {e["index"]: e["type"] for e in layout["layers"]}
    worst = math.inf
    print(f"\n{'part':<14} {'layers':<14} {'predicted ms':>12} {'ONNX MB':>8} {'vs layoutx ONNX dB':>19} {'vs eager dB':>12}")
    with layoutx.ort.Session() as ort:
        for p in emitted["parts"]:
            part = lxt.Part([(i, lxt.DecodeLayer(configs[type_of[i]], lxt.load_safetensors(ckpt, a.weight_map, i)))
                             for i in p["layers"]])
            samples = [layoutx.ort.read_tensors(os.path.join(p["dir"], "calibration", f"sample_{s:03d}"))
                       for s in range(p["calibration_samples"])]
            path = os.path.join(a.out, f"{p['name']}.torch.onnx")
            part.export_onnx(path, samples[0])
            mine, theirs, eager = [], [], []
            with torch.no_grad():
                for sample in samples:
                    feeds = {n: sample[n] for n in part.input_names()}
                    mine.append(ort.run(path, feeds)["hidden_out"])
                    theirs.append(ort.run(p["onnx"], feeds)["hidden_out"])
                    eager.append(part(*(torch.from_numpy(feeds[n]) for n in part.input_names()))[-1].numpy())
            s_layoutx, s_eager = snr_db(theirs, mine), snr_db(eager, mine)
            worst = min(worst, s_layoutx, s_eager)
            print(f"{p['name']:<14} {str(p['layers']):<14} {p['predicted_ms']:>12.3f} {os.path.getsize(path) / 2**20:>8.1f} "
                  f"{s_layoutx:>19.1f} {s_eager:>12.1f}")
    for n in emitted["not_emitted"]:
        print(f"not built: {n} (no layer graph in layoutx)")
    return worst


if __name__ == "__main__":
    main()
