"""ONNX Runtime (CPU) from Python through layoutx's own harness (scripts/ort/run.js, Node.js
with onnxruntime-node, installed by scripts/setup): there is no onnxruntime Python package
among Debian's, and this way a PyTorch export and layoutx's emitted ONNX run in the same ORT.

    with layoutx.ort.Session() as ort:
        outputs = ort.run("layer.onnx", {"hidden_in": array, ...})   # {name: numpy float32}
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

import layoutx
from layoutx import _layoutx


def unavailable_reason():
    """Why ORT cannot run here (no node, onnxruntime-node not installed), or None."""
    return _layoutx.ort_unavailable_reason()


def write_tensors(directory, tensors):
    """{name: array} as the harness reads them: DIR/<name>.bin raw float32 + DIR/tensors.json."""
    os.makedirs(directory, exist_ok=True)
    index = []
    for name, a in tensors.items():
        a = np.ascontiguousarray(np.asarray(a, dtype="<f4"))
        a.tofile(os.path.join(directory, name + ".bin"))
        index.append({"name": name, "file": name + ".bin", "shape": list(a.shape), "dtype": "float32"})
    with open(os.path.join(directory, "tensors.json"), "w") as f:
        json.dump({"tensors": index}, f)


def read_tensors(directory):
    """{name: numpy float32 array} of a DIR/tensors.json (the harness's and the bundle's format)."""
    with open(os.path.join(directory, "tensors.json")) as f:
        index = json.load(f)["tensors"]
    return {t["name"]: np.fromfile(os.path.join(directory, t["file"]), dtype="<f4").reshape(t["shape"]) for t in index}


class Session:
    """One harness process (run.js --serve-models) for many runs of many models."""

    def __init__(self, threads=1):
        reason = unavailable_reason()
        if reason:
            raise layoutx.Error(f"ONNX Runtime is unavailable: {reason}")
        node = os.environ.get("LAYOUTX_NODE", "node")
        script = os.path.join(_layoutx.ort_harness_dir(), "run.js")
        self._dir = tempfile.mkdtemp(prefix="layoutx-ort-")
        self._calls = 0
        self._proc = subprocess.Popen([node, script, "--serve-models", "--threads", str(threads)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)

    def run(self, model, inputs):
        """Runs `model` (an .onnx path) once on {name: array}; returns {name: array}."""
        self._calls += 1
        step = os.path.join(self._dir, str(self._calls))
        write_tensors(os.path.join(step, "in"), inputs)
        self._proc.stdin.write(f"{os.path.abspath(model)} {step}/in {step}/out\n")
        self._proc.stdin.flush()
        answer = self._proc.stdout.readline().strip()
        if answer != "ok":
            raise layoutx.Error(f"ONNX Runtime: {model}: {answer or 'the harness exited'}")
        out = read_tensors(os.path.join(step, "out"))
        shutil.rmtree(step)
        return out

    def close(self):
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(timeout=60)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
