#!/usr/bin/env node
// onnxruntime-node side of the executor's cross-checks and benchmark.
//
//   node tests/exec/ort_exec.js JOBS.json
//
// JOBS.json: [{model, inputs: {NAME: FILE.npy}, out: DIR, opt: "all"|"disabled",
//              bench: N (optional: time N runs after warm-up)}]
// Writes DIR/<k>.npy per output (in session output order) and DIR/result.json
// {outputs: [{name, file}], times_ms: [...], base_hwm_mb, hwm_mb} (peak RSS before loading / at the end). Exit 1 if a job failed.
'use strict';
const fs = require('fs');
const path = require('path');
const npmDir = process.env.QAIRT_NPM_DIR || path.join(__dirname, '..', '..', 'third_party', 'npm');
const ort = require(path.join(npmDir, 'node_modules', 'onnxruntime-node'));

const DESCR = { '<f4': ['float32', Float32Array, 4], '<i8': ['int64', BigInt64Array, 8], '<i4': ['int32', Int32Array, 4],
  '|u1': ['uint8', Uint8Array, 1], '|i1': ['int8', Int8Array, 1], '|b1': ['bool', Uint8Array, 1] };
const TYPE = {};
for (const [d, v] of Object.entries(DESCR)) TYPE[v[0]] = [d, v[1], v[2]];

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const hl = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + hl);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Arr, size] = DESCR[descr];
  const body = buf.subarray(10 + hl);
  const ab = new ArrayBuffer(body.length);
  new Uint8Array(ab).set(body);
  return new ort.Tensor(type, new Arr(ab, 0, body.length / size), dims);
}

function writeNpy(file, t) {
  const [descr] = TYPE[t.type] || fail(`cannot write ${t.type}`);
  const dims = Array.from(t.dims);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  const d = t.data;
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

function fail(m) { throw new Error(m); }

function hwmMb() {
  const m = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

async function run(job) {
  fs.mkdirSync(job.out, { recursive: true });
  const base_mb = hwmMb();
  const session = await ort.InferenceSession.create(job.model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: job.opt || 'all', executionMode: 'sequential' });
  const feeds = {};
  for (const [name, file] of Object.entries(job.inputs || {})) feeds[name] = readNpy(file);
  let results = await session.run(feeds);
  const times = [];
  if (job.bench) {
    for (let i = 0; i < 5; ++i) await session.run(feeds);
    for (let i = 0; i < job.bench; ++i) {
      const t0 = process.hrtime.bigint();
      results = await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  const outputs = session.outputNames.map((name, k) => {
    const file = path.join(job.out, `${k}.npy`);
    writeNpy(file, results[name]);
    return { name, file };
  });
  fs.writeFileSync(path.join(job.out, 'result.json'),
    JSON.stringify({ outputs, times_ms: times, base_hwm_mb: base_mb, hwm_mb: hwmMb() }));
}

(async () => {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  let failed = 0;
  for (const job of jobs) {
    try { await run(job); } catch (e) { ++failed; console.error(`${job.model}: ${e.message}`); }
  }
  process.exit(failed ? 1 : 0);
})();
