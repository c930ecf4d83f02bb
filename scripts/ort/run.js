#!/usr/bin/env node
// layoutx's ONNX Runtime (CPU) harness: runs an emitted layer model on given inputs with
// profiling on and writes its outputs, the ORT profile JSON and per-run wall times.
//
//   node run.js MODEL.onnx INPUTS_DIR OUT_DIR [--runs N] [--warmup W] [--threads T] [--no-profile]
//   node run.js --job JOB.json     JOB: {"model", "inputs", "out", "runs", "warmup", "threads", "profile"}
//   node run.js --serve MODEL.onnx [--threads T]
//       keeps one session open; reads "INPUTS_DIR OUT_DIR" lines on stdin, runs once per line,
//       answers "ok" or "error <message>" on stdout (layoutx's validation drives a multi-step
//       history this way and plays the runtime's part for the cache between steps)
//   node run.js --serve-models [--threads T]
//       the same for many models: reads "MODEL.onnx INPUTS_DIR OUT_DIR" lines (a session per
//       model, kept for the last 4 models used), answers "ok" or "error <message>"
//   node run.js --version          prints {"onnxruntime": "<version>"} (availability check)
//
// Tensor files (both directions): INPUTS_DIR/tensors.json = {"tensors": [{"name", "file",
// "shape", "dtype": "float32"}]} beside raw little-endian float32 files. OUT_DIR gets the same
// for the outputs, plus timings.json {"warmup_ms": [...], "runs_ms": [...], ...} and
// ort_profile.json (ONNX Runtime's Chrome-trace profile of the timed runs; the raw trace with
// session setup and warm-up is kept as ort_profile_all.json).
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

function fail(msg) {
  process.stderr.write(`run.js: ${msg}\n`);
  process.exit(2);
}

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  fail(`onnxruntime-node is not installed (run scripts/setup): ${e.message}`);
}

function parseArgs(argv) {
  const a = { runs: 1, warmup: 0, threads: 1, profile: true, positional: [] };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${k} needs a value`);
      return argv[++i];
    };
    const int = (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) fail(`${k} must be a non-negative integer, got '${v}'`);
      return n;
    };
    if (k === '--runs') a.runs = int(next());
    else if (k === '--warmup') a.warmup = int(next());
    else if (k === '--threads') a.threads = int(next());
    else if (k === '--no-profile') a.profile = false;
    else if (k === '--job') a.job = next();
    else if (k === '--serve') a.serve = true;
    else if (k === '--serve-models') a.serveModels = true;
    else if (k === '--version') a.version = true;
    else if (k.startsWith('--')) fail(`unknown option ${k}`);
    else a.positional.push(k);
  }
  return a;
}

function readTensors(dir) {
  const indexPath = path.join(dir, 'tensors.json');
  let index;
  try {
    index = JSON.parse(fs.readFileSync(indexPath, 'utf8'));
  } catch (e) {
    throw new Error(`${indexPath}: ${e.message}`);
  }
  const feeds = {};
  for (const t of index.tensors) {
    if (t.dtype !== 'float32') throw new Error(`${indexPath}: ${t.name}: dtype ${t.dtype} (only float32)`);
    const buf = fs.readFileSync(path.join(dir, t.file));
    const n = t.shape.reduce((x, y) => x * y, 1);
    if (buf.length !== 4 * n) throw new Error(`${t.file}: ${buf.length} bytes, shape [${t.shape}] needs ${4 * n}`);
    const data = new Float32Array(n);
    Buffer.from(data.buffer).set(buf);
    feeds[t.name] = new ort.Tensor('float32', data, t.shape);
  }
  return feeds;
}

function writeTensors(dir, results) {
  fs.mkdirSync(dir, { recursive: true });
  const tensors = [];
  for (const [name, t] of Object.entries(results)) {
    if (t.type !== 'float32') throw new Error(`output ${name}: type ${t.type} (only float32)`);
    const file = `${name}.bin`;
    fs.writeFileSync(path.join(dir, file), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    tensors.push({ name, file, shape: Array.from(t.dims), dtype: 'float32' });
  }
  fs.writeFileSync(path.join(dir, 'tensors.json'), JSON.stringify({ tensors }, null, 1) + '\n');
}

function sessionOptions(threads, profilePrefix) {
  const o = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  };
  if (profilePrefix) {
    o.enableProfiling = true;
    o.profileFilePrefix = profilePrefix;
  }
  return o;
}

async function measure(job) {
  fs.mkdirSync(job.out, { recursive: true });
  const prefix = job.profile ? path.join(path.resolve(job.out), 'ort_profile') : undefined;
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(job.model, sessionOptions(job.threads, prefix));
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = readTensors(job.inputs);
  const warmup = [], runs = [];
  let results;
  for (let i = 0; i < job.warmup + job.runs; ++i) {
    const s = process.hrtime.bigint();
    results = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - s) / 1e6;
    (i < job.warmup ? warmup : runs).push(ms);
  }
  let profileFile = null;
  let timedRunsInProfile = 0;
  if (job.profile) {
    // ORT writes <prefix>_<timestamp>.json; give it a fixed name.
    const written = session.endProfiling ? session.endProfiling() : undefined;
    const dir = path.dirname(prefix);
    const found = (typeof written === 'string' && fs.existsSync(written))
      ? written
      : fs.readdirSync(dir).filter((f) => /^ort_profile_.*\.json$/.test(f)).map((f) => path.join(dir, f)).sort().pop();
    if (found) {
      // Keep the raw trace, and write ort_profile.json with the timed runs' node events only:
      // every event before the first timed run's "model_run" belongs to session setup or warm-up.
      const all = path.join(dir, 'ort_profile_all.json');
      fs.renameSync(found, all);
      const events = JSON.parse(fs.readFileSync(all, 'utf8'));
      const runs = events.filter((e) => e.name === 'model_run').sort((a, b) => a.ts - b.ts);
      const cutoff = runs.length === job.warmup + job.runs ? runs[job.warmup].ts : -Infinity;
      const timed = events.filter((e) => e.cat !== 'Node' || e.ts >= cutoff);
      profileFile = path.join(dir, 'ort_profile.json');
      fs.writeFileSync(profileFile, JSON.stringify(timed) + '\n');
      timedRunsInProfile = runs.length === job.warmup + job.runs ? job.runs : runs.length;
    }
  }
  if (results) writeTensors(job.out, results);
  const timings = {
    model: path.resolve(job.model),
    onnxruntime: ort.env.versions.node || ort.env.versions.common,
    execution_provider: 'cpu',
    intra_op_threads: job.threads,
    profiling: job.profile,
    session_create_ms: createMs,
    warmup_ms: warmup,
    runs_ms: runs,
    profile_file: profileFile ? path.basename(profileFile) : null,
    profile_runs: timedRunsInProfile,
  };
  fs.writeFileSync(path.join(job.out, 'timings.json'), JSON.stringify(timings, null, 1) + '\n');
  await session.release();
}

// The serve loop: one run per stdin line, "ok" or "error <message>" per line. `model` fixed
// (--serve: lines are "INPUTS_DIR OUT_DIR") or null (--serve-models: "MODEL INPUTS_DIR OUT_DIR",
// a session per model, opened on its first line and kept while it is among the last
// kKeptSessions models used: a model's weights stay in memory as long as its session).
const kKeptSessions = 4;
async function serve(model, threads) {
  const sessions = new Map();  // in order of last use
  const session = async (m) => {
    let s = sessions.get(m);
    if (s) sessions.delete(m);
    else s = await ort.InferenceSession.create(m, sessionOptions(threads, undefined));
    sessions.set(m, s);
    if (sessions.size > kKeptSessions) {
      const [oldest, o] = sessions.entries().next().value;
      sessions.delete(oldest);
      await o.release();
    }
    return s;
  };
  if (model) await session(model);
  const form = model ? 'INPUTS_DIR OUT_DIR' : 'MODEL.onnx INPUTS_DIR OUT_DIR';
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    const parts = line.trim().split(/\s+/);
    if (parts.length === 1 && parts[0] === '') continue;
    try {
      if (parts.length !== (model ? 2 : 3)) throw new Error(`expected "${form}", got '${line}'`);
      const [m, inputs, out] = model ? [model, ...parts] : parts;
      const results = await (await session(m)).run(readTensors(inputs));
      writeTensors(out, results);
      process.stdout.write('ok\n');
    } catch (e) {
      process.stdout.write(`error ${String(e.message).replace(/\s+/g, ' ')}\n`);
    }
  }
  for (const s of sessions.values()) await s.release();
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  if (a.version) {
    process.stdout.write(JSON.stringify({ onnxruntime: ort.env.versions.node || ort.env.versions.common }) + '\n');
    return;
  }
  if (a.serveModels) return serve(null, a.threads);
  if (a.serve) {
    if (a.positional.length !== 1) fail('--serve takes one MODEL.onnx');
    return serve(a.positional[0], a.threads);
  }
  let job;
  if (a.job) {
    const j = JSON.parse(fs.readFileSync(a.job, 'utf8'));
    const known = ['model', 'inputs', 'out', 'runs', 'warmup', 'threads', 'profile'];
    for (const k of Object.keys(j)) if (!known.includes(k)) fail(`${a.job}: unknown key '${k}'`);
    for (const k of ['model', 'inputs', 'out']) if (typeof j[k] !== 'string') fail(`${a.job}: '${k}' must be a string`);
    job = { runs: 1, warmup: 0, threads: 1, profile: true, ...j };
  } else {
    if (a.positional.length !== 3) fail('usage: run.js MODEL.onnx INPUTS_DIR OUT_DIR [--runs N] [--warmup W]');
    job = { model: a.positional[0], inputs: a.positional[1], out: a.positional[2], runs: a.runs,
            warmup: a.warmup, threads: a.threads, profile: a.profile };
  }
  if (job.runs < 1) fail('--runs must be at least 1');
  await measure(job);
}

main().catch((e) => fail(e.message));
