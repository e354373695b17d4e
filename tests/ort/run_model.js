#!/usr/bin/env node
// Runs an ONNX model with onnxruntime-node (the cross-check of qairt's ONNX
// import and export). Installed by scripts/setup-npm.sh into third_party/npm.
//
//   node tests/ort/run_model.js --model M.onnx --out DIR
//        [--input NAME=FILE.npy | --input NAME=FILE.bin:DTYPE:D0,D1,...]...
//        [--seed N] [--shape NAME=D0,D1,...]... [--dim SYMBOL=N]... [--threads N]
//   node tests/ort/run_model.js --batch JOBS.json
//
// Inputs not given as files are generated deterministically from --seed
// (floats uniform in [-1, 1), integers in [0, 10), bools 0/1) with the shape
// from --shape or the model (symbolic dims resolved by --dim); generated
// inputs are written to DIR/input_<k>.npy so another model can be fed the
// same values. Outputs go to DIR/output_<k>.npy (little-endian .npy), and
// DIR/result.json lists inputs and outputs with names, dims, types and files.
// A batch file is a JSON array of jobs {model, out, inputs: {NAME: FILE},
// seed, shapes: {NAME: [dims]}, dims: {SYMBOL: N}} run in one process.
// Exit status: 0 ok, 1 a model failed to load or run (in a batch, after
// running the others; its OUT/error.txt says why), 2 usage error.
'use strict';

const fs = require('fs');
const path = require('path');

const npmDir = process.env.QAIRT_NPM_DIR || path.join(__dirname, '..', '..', 'third_party', 'npm');
let ort;
try {
  ort = require(path.join(npmDir, 'node_modules', 'onnxruntime-node'));
} catch (e) {
  console.error(`run_model: cannot load onnxruntime-node from ${npmDir} (run scripts/setup-npm.sh): ${e.message}`);
  process.exit(1);
}

// ---- .npy ------------------------------------------------------------------

const TYPES = {
  float32: { descr: '<f4', array: Float32Array, size: 4 },
  float64: { descr: '<f8', array: Float64Array, size: 8 },
  float16: { descr: '<f2', array: Uint16Array, size: 2 },
  int8: { descr: '|i1', array: Int8Array, size: 1 },
  uint8: { descr: '|u1', array: Uint8Array, size: 1 },
  int16: { descr: '<i2', array: Int16Array, size: 2 },
  uint16: { descr: '<u2', array: Uint16Array, size: 2 },
  int32: { descr: '<i4', array: Int32Array, size: 4 },
  uint32: { descr: '<u4', array: Uint32Array, size: 4 },
  int64: { descr: '<i8', array: BigInt64Array, size: 8 },
  uint64: { descr: '<u8', array: BigUint64Array, size: 8 },
  bool: { descr: '|b1', array: Uint8Array, size: 1 },
};
const DESCR_TO_TYPE = {};
for (const [t, info] of Object.entries(TYPES)) DESCR_TO_TYPE[info.descr] = t;
DESCR_TO_TYPE['<u1'] = 'uint8';
DESCR_TO_TYPE['<i1'] = 'int8';
DESCR_TO_TYPE['<b1'] = 'bool';

function fail(msg, code = 1) {
  const err = new Error(msg);
  err.exitCode = code;
  throw err;
}

function count(dims) {
  return dims.reduce((a, b) => a * b, 1);
}

function typedFromBytes(type, buf, n, what) {
  const info = TYPES[type];
  if (!info) fail(`${what}: unsupported dtype ${type}`);
  if (buf.length !== n * info.size) fail(`${what}: ${buf.length} bytes for ${n} ${type} elements`);
  const copy = new ArrayBuffer(buf.length);  // aligned
  new Uint8Array(copy).set(buf);
  return new info.array(copy);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) fail(`${file}: cannot parse the .npy header ${header}`);
  if (fortran[1] === 'True') fail(`${file}: fortran_order arrays are not supported`);
  const type = DESCR_TO_TYPE[descr[1]];
  if (!type) fail(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const data = typedFromBytes(type, buf.subarray(start + headerLen), count(dims), file);
  return new ort.Tensor(type, data, dims);
}

function writeNpy(file, tensor) {
  const info = TYPES[tensor.type];
  if (!info) fail(`cannot write ${tensor.type} to ${file}`);
  const dims = Array.from(tensor.dims);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${info.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

function readRaw(spec, what) {
  // FILE.bin:DTYPE:D0,D1,...
  const parts = spec.split(':');
  if (parts.length < 3) fail(`${what}: raw input needs FILE:DTYPE:DIMS, got ${spec}`, 2);
  const dimsText = parts.pop();
  const type = parts.pop();
  const file = parts.join(':');
  const dims = dimsText.length ? dimsText.split(',').map(Number) : [];
  return new ort.Tensor(type, typedFromBytes(type, fs.readFileSync(file), count(dims), file), dims);
}

// ---- deterministic inputs --------------------------------------------------

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomTensor(type, dims, rand, what) {
  const info = TYPES[type];
  if (!info) fail(`${what}: cannot generate ${type} inputs`);
  const n = count(dims);
  const data = new info.array(n);
  for (let i = 0; i < n; ++i) {
    const r = rand();
    if (type === 'float32' || type === 'float64') data[i] = r * 2 - 1;
    else if (type === 'bool') data[i] = r < 0.5 ? 0 : 1;
    else if (type === 'int64' || type === 'uint64') data[i] = BigInt(Math.floor(r * 10));
    else if (type === 'float16') fail(`${what}: cannot generate float16 inputs; give a file`);
    else data[i] = Math.floor(r * 10);
  }
  return new ort.Tensor(type, data, dims);
}

// ---- one job ---------------------------------------------------------------

async function runJob(job) {
  if (!job.model || !job.out) fail('a job needs model and out', 2);
  fs.mkdirSync(job.out, { recursive: true });
  for (const stale of ['result.json', 'error.txt']) fs.rmSync(path.join(job.out, stale), { force: true });
  const options = { intraOpNumThreads: job.threads || 1, interOpNumThreads: 1 };
  let session;
  try {
    session = await ort.InferenceSession.create(job.model, options);
  } catch (e) {
    fail(`${job.model}: onnxruntime cannot load the model: ${e.message}`);
  }
  const rand = mulberry32(job.seed || 0);
  const feeds = {};
  const inputs = [];
  const meta = session.inputMetadata || [];
  for (let k = 0; k < session.inputNames.length; ++k) {
    const name = session.inputNames[k];
    let tensor;
    let file = (job.inputs || {})[name];
    if (file) {
      tensor = file.endsWith('.npy') ? readNpy(file) : readRaw(file, name);
    } else {
      const m = meta[k] || {};
      let dims = (job.shapes || {})[name];
      if (!dims) {
        if (!m.shape) fail(`${job.model}: input '${name}' needs --shape (no shape in the model)`, 2);
        dims = m.shape.map((d) => {
          if (typeof d === 'number' && d >= 0) return d;
          const v = (job.dims || {})[d];
          if (v === undefined) fail(`${job.model}: input '${name}' has symbolic dim '${d}'; give --dim ${d}=N or --shape`, 2);
          return v;
        });
      }
      tensor = randomTensor(m.type || 'float32', dims, rand, name);
      file = path.join(job.out, `input_${k}.npy`);
      writeNpy(file, tensor);
    }
    feeds[name] = tensor;
    inputs.push({ name, file, dims: Array.from(tensor.dims), type: tensor.type });
  }
  const t0 = process.hrtime.bigint();
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    fail(`${job.model}: onnxruntime failed to run the model: ${e.message}`);
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const outputs = [];
  session.outputNames.forEach((name, k) => {
    const t = results[name];
    const file = path.join(job.out, `output_${k}.npy`);
    writeNpy(file, t);
    outputs.push({ name, file, dims: Array.from(t.dims), type: t.type });
  });
  const result = { model: job.model, inputs, outputs, run_ms: ms };
  fs.writeFileSync(path.join(job.out, 'result.json'), JSON.stringify(result, null, 2) + '\n');
  if (typeof session.release === 'function') await session.release();
  return result;
}

// ---- command line ----------------------------------------------------------

function parseArgs(argv) {
  const job = { inputs: {}, shapes: {}, dims: {}, seed: 0 };
  let batch = null;
  const keyValue = (s, flag) => {
    const eq = s.indexOf('=');
    if (eq <= 0) fail(`${flag} needs NAME=VALUE, got '${s}'`, 2);
    return [s.slice(0, eq), s.slice(eq + 1)];
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${a} needs an argument`, 2);
      return argv[++i];
    };
    if (a === '--model') job.model = next();
    else if (a === '--out') job.out = next();
    else if (a === '--seed') job.seed = Number(next());
    else if (a === '--threads') job.threads = Number(next());
    else if (a === '--batch') batch = next();
    else if (a === '--input') { const [k, v] = keyValue(next(), a); job.inputs[k] = v; }
    else if (a === '--shape') { const [k, v] = keyValue(next(), a); job.shapes[k] = v.split(',').map(Number); }
    else if (a === '--dim') { const [k, v] = keyValue(next(), a); job.dims[k] = Number(v); }
    else if (a === '-h' || a === '--help') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 20).join('\n'));
      process.exit(0);
    } else fail(`unknown argument '${a}'`, 2);
  }
  if (batch) return JSON.parse(fs.readFileSync(batch, 'utf8'));
  if (!job.model || !job.out) fail('--model and --out are required (or --batch)', 2);
  return [job];
}

(async () => {
  try {
    const jobs = parseArgs(process.argv.slice(2));
    let failed = 0;
    for (const job of jobs) {
      // A failing job of a batch is reported (stderr and OUT/error.txt); the others still run.
      try {
        const r = await runJob(job);
        console.log(`${job.model}: ${r.outputs.map((o) => `${o.name}[${o.dims.join(',')}] ${o.type}`).join(', ')} (${r.run_ms.toFixed(1)} ms)`);
      } catch (e) {
        if (jobs.length === 1 || e.exitCode === 2) throw e;
        ++failed;
        console.error(`run_model: ${e.message}`);
        fs.mkdirSync(job.out, { recursive: true });
        fs.writeFileSync(path.join(job.out, 'error.txt'), e.message + '\n');
      }
    }
    if (failed) {
      console.error(`run_model: ${failed} of ${jobs.length} jobs failed`);
      process.exit(1);
    }
  } catch (e) {
    console.error(`run_model: ${e.message}`);
    process.exit(e.exitCode || 1);
  }
})();
