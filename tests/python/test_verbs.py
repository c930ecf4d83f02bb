"""import layoutx against the layoutx executable: the same documents, the same errors, the same
help. python3 test_verbs.py LAYOUTX_BINARY [unittest args]; the built package on PYTHONPATH."""
import ast
import json
import os
import pydoc
import shutil
import subprocess
import sys
import tempfile
import unittest

import layoutx

BIN = sys.argv.pop(1)
HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = os.path.join(HERE, "models", "small-hybrid.yaml")


def cli(*args):
    """(exit status, stdout, stderr) of the executable as a new process."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, env=ENV)
    return p.returncode, p.stdout, p.stderr


class Verbs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="layoutx-verbs-")
        # Both sides use the same database default; keep it out of the user's data folder.
        global ENV
        ENV = dict(os.environ, XDG_DATA_HOME=cls.work)
        os.environ["XDG_DATA_HOME"] = cls.work

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_readme_one_liner_equals_the_cli(self):
        line = "import layoutx; print(layoutx.select(precision='w4a16', ctx=[4096])['step_ms'])"
        py = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True, check=True)
        status, out, _ = cli("select", "--precision", "w4a16", "--ctx", "4096", "--json")
        self.assertEqual(status, 0)
        self.assertEqual(float(py.stdout), json.loads(out)["step_ms"])
        print(f"\nREADME one-liner: {py.stdout.strip()} ms; CLI step_ms: {json.loads(out)['step_ms']} ms")

    def test_same_documents_as_the_cli(self):
        db = os.path.join(self.work, "docs.db")
        # report and regress read an existing database (only ingest creates one).
        measurements = os.path.join(HERE, "..", "..", "configs", "calibration", "spark-s25-measurements.yaml")
        self.assertEqual(cli("ingest", measurements, "--db", db)[0], 0)
        calls = [
            ("graph", dict(model=SMALL, layer="full", ctx=12, layout="score-join")),
            ("predict", dict(ctx=2048, layout="ring", precision="w8a16")),
            ("select", dict(precision="w4a16", ctx=[1024, 4096], no_fidelity=True)),
            ("step", dict(layout="sliding=ring,full=ring", ctx=4096, precision="fp16")),
            ("whatif", dict(no_fidelity=True, set=["sliding.returns=window"])),
            ("propose", dict(precision="w4a16", ctx=4096, no_fidelity=True)),
            ("public", dict()),
            ("calibrate", dict(no_save=True)),
            ("parity", dict(model=SMALL, ctx=32, a="ring", b="reference", steps=9)),
            ("report", dict(db=db)),
            ("regress", dict(db=db)),
        ]
        for verb, kwargs in calls:
            with self.subTest(verb=verb):
                args = [verb, "--json"]
                for k, v in kwargs.items():
                    flag = "--" + k.replace("_", "-")
                    for x in v if isinstance(v, list) else [v]:
                        args += [flag] if x is True else [flag, x]
                status, out, err = cli(*args)
                self.assertIn(status, (0, 1), err)
                untimed = lambda d: {k: v for k, v in d.items() if not k.endswith("_seconds")}  # parity's run times
                self.assertEqual(untimed(getattr(layoutx, verb)(**kwargs)), untimed(json.loads(out)))

    def test_emit_and_ingest_write_the_same_files(self):
        a, b = os.path.join(self.work, "emit_py"), os.path.join(self.work, "emit_cli")
        doc = layoutx.emit(model=SMALL, ctx=32, layout="ring", out=a, calibration_samples=2)
        status, out, _ = cli("emit", "--model", SMALL, "--ctx", 32, "--layout", "ring", "--out", b,
                             "--calibration-samples", 2, "--json")
        self.assertEqual(status, 0)
        self.assertEqual(doc["bundles"][0]["variant_key"], json.loads(out)["bundles"][0]["variant_key"])
        for name in ("sliding_ring_fp16.onnx", "calibration/sample_001/k_cache.bin"):
            with open(os.path.join(a, name), "rb") as x, open(os.path.join(b, name), "rb") as y:
                self.assertEqual(x.read(), y.read(), name)
        measurements = os.path.join(HERE, "..", "..", "configs", "calibration", "spark-s25-measurements.yaml")
        got = layoutx.ingest(files=[measurements], db=os.path.join(self.work, "py.db"))
        status, out, _ = cli("ingest", measurements, "--db", os.path.join(self.work, "cli.db"), "--json")
        want = json.loads(out)
        self.assertEqual(len(got["files"]), len(want["files"]))
        self.assertGreater(len(got["files"]), 0)

    def test_bad_input_raises_the_cli_message(self):
        db_dir = self.work  # a folder is not a database
        bad = [
            ("graph", dict(layer="middle")),
            ("predict", dict(ctx="abc")),
            ("select", dict(precision="int3", no_fidelity=True)),
            ("step", dict(layout="sliding=nope")),
            ("whatif", dict(set=["sliding.returns=sideways"])),
            ("calibrate", dict(data="/nonexistent/measurements.yaml", no_save=True)),
            ("ingest", dict(files=["/nonexistent/profile.csv"], db=os.path.join(self.work, "bad.db"))),
            ("regress", dict(tolerance=-1)),
            ("report", dict(db=db_dir)),
            ("emit", dict(out=os.path.join(self.work, "bad_emit"), layout="nope")),
            ("parity", dict(a="nope")),
            ("measure", dict(layout="nope", no_ingest=True)),
            ("next", dict(budget=0, no_fidelity=True)),
            ("propose", dict(scope="kernel", no_fidelity=True)),
            ("public", dict(file="/nonexistent/public.yaml")),
        ]
        self.assertEqual({v for v, _ in bad}, {s["name"] for s in layoutx._layoutx.verbs()}, "one case per verb")
        print()
        for verb, kwargs in bad:
            with self.subTest(verb=verb):
                args = [verb, "--json"]
                for k, v in kwargs.items():
                    flag = "--" + k.replace("_", "-")
                    if k == "files":
                        args += v
                        continue
                    for x in v if isinstance(v, list) else [v]:
                        args += [flag] if x is True else [flag, x]
                status, _, err = cli(*args)
                self.assertEqual(status, 2)
                with self.assertRaises(layoutx.Error) as raised:
                    getattr(layoutx, verb)(**kwargs)
                self.assertIs(type(raised.exception), layoutx.Error)
                self.assertEqual(str(raised.exception), err.strip())
                print(f"  {verb:<9} layoutx.Error: {str(raised.exception).splitlines()[0]}")

    def test_a_flag_takes_only_a_bool(self):
        # 'false' is a true value in Python: it must not turn the flag on.
        for value in ("false", 0, 1, "yes"):
            with self.subTest(value=value), self.assertRaises(TypeError) as raised:
                layoutx.select(no_fidelity=value, ctx=[1024])
            self.assertIn("no_fidelity: takes True or False", str(raised.exception))

    def test_run_takes_a_list_as_the_command_line(self):
        one_by_one = layoutx.run("select", "--no-fidelity", "--ctx", 1024, "--json")
        self.assertEqual(one_by_one[0], 0, one_by_one[2])
        self.assertEqual(layoutx.run(["select", "--no-fidelity", "--ctx", 1024, "--json"]), one_by_one)
        self.assertEqual(layoutx.run(("select", "--no-fidelity", "--ctx", 1024, "--json")), one_by_one)

    def test_a_nul_in_an_argument_is_refused(self):
        with self.assertRaises(ValueError) as raised:
            layoutx.run("select", "--model", "con\0fig.yaml")
        self.assertIn("argument 3 ('con'...) contains a NUL character", str(raised.exception))
        with self.assertRaises(ValueError):
            layoutx.select(model="con\0fig.yaml", no_fidelity=True)

    def test_a_nul_in_a_file_does_not_cut_the_message(self):
        # A NUL byte inside a measurement file's field: the message goes on past it (spelled
        # "\\0"), in layoutx.Error as on the command line's stderr.
        path = os.path.join(self.work, "nul.csv")
        with open(path, "wb") as f:
            f.write(b"layer,ctx,variant,precision,ms\nfull,4096,ri\0ng,fp16,2\n")
        db = os.path.join(self.work, "nul.db")
        with self.assertRaises(layoutx.Error) as raised:
            layoutx.ingest(files=[path], device="galaxy-s25", db=db)
        self.assertIn("unknown preset 'ri\\0ng' (presets: ", str(raised.exception))
        status, _, err = cli("ingest", path, "--device", "galaxy-s25", "--db", db)
        self.assertEqual(status, 2)
        self.assertIn("unknown preset 'ri\\0ng' (presets: ", err)

    def test_the_cli_and_python_share_the_fidelity_memo(self):
        cache = tempfile.mkdtemp(prefix="layoutx-memo-", dir=self.work)
        env = dict(ENV, LAYOUTX_CACHE_DIR=cache)
        p = subprocess.run([BIN, "select", "--model", SMALL, "--ctx", "32", "--json"], capture_output=True,
                           text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        folder = os.path.join(cache, "fidelity")
        stamps = {f: os.stat(os.path.join(folder, f)).st_mtime_ns for f in os.listdir(folder)}
        self.assertTrue(stamps)
        # The module is another file than the executable: it reads the same figures, writes none.
        line = f"import layoutx, json; print(json.dumps(layoutx.select(model={SMALL!r}, ctx=[32])))"
        py = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True, env=env, check=True)
        self.assertEqual(json.loads(py.stdout), json.loads(p.stdout))
        self.assertEqual({f: os.stat(os.path.join(folder, f)).st_mtime_ns for f in os.listdir(folder)}, stamps)

    def test_ctrl_c_stops_the_fidelity_check(self):
        # A cold fp16 check of Mistral's 4096-token window computes about 35 figures, one memo
        # file each as it goes; SIGINT a second in must raise KeyboardInterrupt out of the call
        # (not layoutx.Error, not a finished document) and stop the check there: a handful of
        # figures at most, where an interrupt honoured only at the end would leave them all.
        script = (
            "import layoutx, os, signal, threading\n"
            "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
            "try:\n"
            f"    layoutx.select(model={os.path.join(HERE, '..', 'fixtures', 'hf', 'mistral-7b.json')!r}, "
            "ctx=[8192], precision='fp16')\n"
            "    print('finished')\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted')\n")
        cache = tempfile.mkdtemp(prefix="layoutx-cache-", dir=self.work)
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=dict(ENV, LAYOUTX_CACHE_DIR=cache), timeout=240)
        self.assertEqual(p.stdout.strip(), "interrupted", p.stderr)
        folder = os.path.join(cache, "fidelity")
        figures = len(os.listdir(folder)) if os.path.isdir(folder) else 0
        self.assertLess(figures, 8, f"{figures} figures were computed after the interrupt")

    def test_help_reads_like_the_cli(self):
        for spec in layoutx._layoutx.verbs():
            with self.subTest(verb=spec["name"]):
                _, out, _ = cli(spec["name"], "--help")
                self.assertIn(out, pydoc.render_doc(getattr(layoutx, spec["name"]), renderer=pydoc.plaintext)
                              .replace("\n    ", "\n") + "\n")

    def test_keywords_are_the_flags(self):
        with self.assertRaises(TypeError):
            layoutx.select(context=4096)
        self.assertIn("fidelity_slack_db", str(pydoc.render_doc(layoutx.select)))

    def test_type_stubs_name_every_verb(self):
        stub = os.path.join(os.path.dirname(layoutx.__file__), "__init__.pyi")
        with open(stub) as f:
            text = f.read()
        tree = ast.parse(text)  # valid Python
        stubbed = {f.name: [a.arg for a in f.args.kwonlyargs] for f in tree.body if isinstance(f, ast.FunctionDef)}
        for spec in layoutx._layoutx.verbs():
            want = [o["name"].replace("-", "_") for o in spec["options"] if o["name"] != "json"]
            self.assertEqual(stubbed.get(spec["name"]), want, spec["name"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
