#!/usr/bin/python3
"""The HTML report in a real browser: builds a database (the shipped measurements, later runs with a
planted regression, a calibration stored by `calibrate --db`, recorded predictions), writes
`layoutx report --html`, renders it in headless Chromium, takes a screenshot and checks from the
rendered DOM that every plot is present and labelled (title, both axis titles, units on numeric
axes, a legend), that the four sections are there, and that the browser logged no script error.
A control page with a deliberate script error must be caught by the same check. Then a large
database (a million measurements over 614 keys, 1000 runs) must give a bounded page: under 3 MB,
at most 48 history plots of at most 120 groups each, a note saying how many keys are plotted, and
a page headless Chromium renders (the 120 s timeout of every Chromium call here).

Usage: html_report_browser.py LAYOUTX CONFIG_DIR FIXTURES_DIR SCREENSHOT_OUT
Exit 0 pass, 1 fail, 77 skipped (Chromium missing and not under CI)."""
import html.parser
import os
import re
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

LAYOUTX, CONFIGS, FIXTURES, SCREENSHOT_OUT = sys.argv[1:5]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(args, ok_codes=(0,)):
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if r.returncode not in ok_codes:
        print("command failed:", " ".join(args), "\n", r.stdout, r.stderr)
        sys.exit(1)
    return r


def chromium(profile, *args):
    return subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--no-first-run", "--user-data-dir=" + profile, *args],
                          capture_output=True, text=True, timeout=120)


def script_errors(log):
    """Console lines that report an uncaught exception or an error."""
    return [l for l in log.splitlines() if ":CONSOLE" in l and re.search(r'"(Uncaught|Error|TypeError|ReferenceError)', l)]


class Plots(html.parser.HTMLParser):
    """Each <svg class="plot">: its title, axis titles and legend entries; and the section ids."""

    def __init__(self):
        super().__init__()
        self.plots, self.sections, self.stack, self.current, self.text_class = [], [], [], None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "")
        if tag == "section":
            self.sections.append(a.get("id"))
        if tag == "svg" and "plot" in cls.split():
            self.current = {"id": a.get("id"), "title": "", "x": "", "y": "", "legend": 0}
        elif self.current is not None:
            if tag == "g" and cls == "legend-entry":
                self.current["legend"] += 1
            if tag == "text":
                self.text_class = cls
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag == "svg" and self.current is not None:
            self.plots.append(self.current)
            self.current = None
        if tag == "text":
            self.text_class = None

    def handle_data(self, data):
        if self.current is None or not self.text_class:
            return
        key = {"plot-title": "title", "axis-title x": "x", "axis-title y": "y"}.get(self.text_class)
        if key:
            self.current[key] += data


def grow(db, target=1_000_000, runs=1000):
    """Adds `runs` synthetic runs holding `target` layer measurements to a layoutx SQLite database:
    its keys plus 600 more (the same variants at other contexts), each measured about 1600 times,
    a slow drift planted on one key in seven in the last fifth of the runs."""
    con = sqlite3.connect(db)
    c = con.cursor()
    rng = random.Random(7)
    base = c.execute("SELECT DISTINCT device_id, model_id, variant_id, layer_type, ctx, precision, ms FROM layer_measurements").fetchall()
    keys = base + [(d, m, v, lt, 1024 + 16384 * (i + 1), p, ms) for i, (d, m, v, lt, _, p, ms) in enumerate(base * 50)][:600]
    for r in range(runs):
        c.execute("INSERT INTO measurement_runs (source_path, content_hash, format, tool, device_id, ingested_at) "
                  "VALUES (?,?,?,?,?,?)", ("synthetic/run%d.yaml" % r, "synthetic-%d" % r, "yaml", "grow", base[0][0],
                                           "2026-%02d-%02dT12:00:00Z" % (1 + r * 11 // runs, 1 + r % 28)))
    run_ids = [row[0] for row in c.execute("SELECT id FROM measurement_runs WHERE tool = 'grow' ORDER BY id")]
    per_run = target // runs
    rows = []
    for ri, rid in enumerate(run_ids):
        for j in range(per_run):
            d, m, v, lt, ctx, p, ms = keys[(ri * per_run + j) % len(keys)]
            drift = 1.15 if ri > 0.8 * runs and j % 7 == 0 else 1.0
            rows.append((rid, d, m, v, lt, ctx, p, ms * drift * rng.lognormvariate(0, 0.03)))
    c.executemany("INSERT INTO layer_measurements (run_id, device_id, model_id, variant_id, layer_type, ctx, precision, ms) "
                  "VALUES (?,?,?,?,?,?,?,?)", rows)
    con.commit()
    n, k = c.execute("SELECT count(*), count(DISTINCT variant_id || layer_type || ctx) FROM layer_measurements").fetchone()
    con.close()
    return n, k


def main():
    if shutil.which("chromium") is None:
        if os.environ.get("CI"):
            print("FAIL: chromium is missing under CI (scripts/setup installs it)")
            return 1
        print("SKIP: chromium is not installed (Debian's chromium; scripts/setup installs it)")
        return 77
    tmp = tempfile.mkdtemp(prefix="layoutx_html_report_")
    try:
        db = os.path.join(tmp, "h.db")
        dev = ["--device", "galaxy-s25", "--db", db]
        # 1. A history: shipped data, predictions recorded, later runs (one regressed), a stored calibration.
        run([LAYOUTX, "ingest", os.path.join(CONFIGS, "calibration", "spark-s25-measurements.yaml")] + dev)
        run([LAYOUTX, "regress", "--record-predictions", "--db", db])
        run([LAYOUTX, "ingest"] + [os.path.join(FIXTURES, f) for f in ("ours_roll.csv", "ours_roll_later.csv",
                                                                        "ours_roll_regressed.csv")] + dev)
        run([LAYOUTX, "calibrate", "--db", db])
        run([LAYOUTX, "regress", "--record-predictions", "--db", db], ok_codes=(1,))  # the planted regression
        out = os.path.join(tmp, "page")
        r = run([LAYOUTX, "report", "--db", db, "--html", out])
        page = os.path.join(out, "index.html")
        check(os.path.isfile(page), "report --html wrote index.html (" + r.stdout[-200:] + ")")
        url = "file://" + page
        # 2. Screenshot.
        shot = os.path.join(tmp, "shot.png")
        c = chromium(os.path.join(tmp, "profile1"), "--window-size=1400,4200", "--screenshot=" + shot, url)
        check(os.path.isfile(shot) and os.path.getsize(shot) > 20000, "a screenshot was taken (%s)" % c.stderr[-300:])
        if os.path.isfile(shot):
            shutil.copyfile(shot, SCREENSHOT_OUT)
            print("screenshot:", SCREENSHOT_OUT)
            try:
                from PIL import Image  # Debian's python3-pil, when installed: the page is not blank
                im = Image.open(shot).convert("L")
                lo, hi = im.getextrema()
                check(hi - lo > 100, "the screenshot is not blank (grey levels %d..%d)" % (lo, hi))
            except ImportError:
                print("note: python3-pil not installed; screenshot contrast not checked")
        # 3. The rendered DOM and the console.
        c = chromium(os.path.join(tmp, "profile2"), "--enable-logging=stderr", "--v=0", "--dump-dom", url)
        check(not script_errors(c.stderr), "no script errors logged: %s" % script_errors(c.stderr))
        p = Plots()
        p.feed(c.stdout)
        for s in ("history", "calibration", "coverage", "decisions"):
            check(s in p.sections, "section %s present" % s)
        kinds = {k: [q for q in p.plots if (q["id"] or "").startswith(k)] for k in ("history-", "calibration-", "coverage-", "decisions")}
        for k, qs in kinds.items():
            check(len(qs) >= 1, "at least one %s plot (found %d)" % (k, len(qs)))
        check(len(kinds["history-"]) == 14, "one history plot per key (14: the shipped file's timings), found %d" % len(kinds["history-"]))
        for q in p.plots:
            check(q["title"].strip() != "", "%s has a title" % q["id"])
            check(q["x"].strip() != "" and q["y"].strip() != "", "%s has both axis titles" % q["id"])
            check(q["legend"] >= 1, "%s has a legend" % q["id"])
        units = {"history-": ("y", "(ms)"), "calibration-": ("y", "(% "), "decisions": ("x", "(ms")}
        for k, (axis, unit) in units.items():
            for q in kinds[k]:
                check(unit in q[axis], "%s's %s axis states its unit %s: %r" % (q["id"], axis, unit, q[axis]))
        check("REGRESSION" in c.stdout, "the planted regression is highlighted")
        check(c.stdout.count('fill="#d62728"') >= 1, "a regression point is drawn in red")
        # 4. The control: the same console check catches a page that throws.
        bad = os.path.join(tmp, "bad.html")
        with open(bad, "w") as f:
            f.write("<html><body><script>throw new Error('deliberate');</script></body></html>")
        c = chromium(os.path.join(tmp, "profile3"), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + bad)
        check(len(script_errors(c.stderr)) == 1, "the control page's script error is detected")
        print("%d plots checked" % len(p.plots))
        # 5. A large database: the page stays bounded and renders.
        n, k = grow(db)
        check(n >= 1_000_000 and k == 614, "the large database holds >= 1M measurements over 614 keys (%d, %d)" % (n, k))
        big = os.path.join(tmp, "big")
        run([LAYOUTX, "report", "--db", db, "--html", big])
        page = os.path.join(big, "index.html")
        size = os.path.getsize(page)
        print("large database: %d measurements, %d keys, page %.2f MB" % (n, k, size / 1e6))
        check(size < 3_000_000, "the page of 1M measurements is under 3 MB (%d bytes)" % size)
        text = open(page).read()
        check("48 of 614 keys plotted" in text, "the page says how many keys it plotted")
        check("400 of 614 keys listed" in text, "the page says how many keys it listed")
        c = chromium(os.path.join(tmp, "profile4"), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + page)
        p = Plots()
        p.feed(c.stdout)
        hist = [q for q in p.plots if (q["id"] or "").startswith("history-")]
        check(len(hist) == 48, "48 history plots rendered (found %d)" % len(hist))
        check(not script_errors(c.stderr), "no script errors on the large page: %s" % script_errors(c.stderr))
        circles = max(len(re.findall(r"<circle", x)) for x in re.split(r'<svg class="plot"', c.stdout)[1:])
        check(circles <= 120 + 8, "a history plot draws at most 120 groups (+ legend): %d circles" % circles)
        shot = os.path.join(tmp, "big.png")
        chromium(os.path.join(tmp, "profile5"), "--window-size=1400,2400", "--screenshot=" + shot, "file://" + page)
        check(os.path.isfile(shot), "a screenshot of the large page was taken")
        if os.path.isfile(shot):
            big_out = SCREENSHOT_OUT.replace(".png", "_large.png")
            shutil.copyfile(shot, big_out)
            print("screenshot:", big_out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


sys.exit(main())
