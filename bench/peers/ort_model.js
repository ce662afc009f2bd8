// The onnxruntime peer of `fixq bench model`: onnxruntime-node (scripts/install_ort_peer.sh
// puts it in bench/peers/ort/node_modules) on the ONNX file, float32, CPU execution
// provider, intraOpNumThreads 1, interOpNumThreads 1, sequential execution, all graph
// optimizations. First its outputs on fixq's check input (--check DIR: in.K.npy, out.K.npy,
// fixq float's) must agree within --tolerance, else no rows. Rows
// batch,frames_per_call,onnxruntime_float,us_per_frame: frames_per_call 1 is a T = 1 call;
// the graph's state inputs are fed the last call's state outputs (--state-outputs) when it
// has both, otherwise every call starts from zero state (a '#' line says which). Each call
// is an awaited session.run, as a node application makes it.
'use strict';
const fs = require('fs');
const path = require('path');

function args() {
  const a = {tolerance: 1e-4, batch: '1', frames: '1,100', samples: 5, quick: false, stateOutputs: ''};
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; ++i) {
    const k = v[i];
    if (k === '--quick') a.quick = true;
    else if (k === '--model') a.model = v[++i];
    else if (k === '--inputs') a.inputs = v[++i];
    else if (k === '--check') a.check = v[++i];
    else if (k === '--tolerance') a.tolerance = Number(v[++i]);
    else if (k === '--batch') a.batch = v[++i];
    else if (k === '--frames') a.frames = v[++i];
    else if (k === '--samples') a.samples = Number(v[++i]);
    else if (k === '--state-outputs') a.stateOutputs = v[++i];
    else throw new Error(`ort_model.js: unknown option ${k}`);
  }
  return a;
}

// A float32 .npy (v1 or v2 header, C order).
function readNpy(file) {
  const b = fs.readFileSync(file);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + hlen);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True")) throw new Error(`${file}: not C-order float32`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const off = start + hlen;
  const data = new Float32Array(b.buffer.slice(b.byteOffset + off, b.byteOffset + b.length));
  return {shape, data};
}

// Standard normal draws from a fixed LCG (Box-Muller).
let seed = 12345;
function uniform() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return (seed + 1) / 2147483649;
}
function normal() {
  return Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

async function medianUs(f, samples, minSeconds) {
  await f();
  let n = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; ++i) await f();
    if (Number(process.hrtime.bigint() - t0) * 1e-9 >= minSeconds || n >= 1 << 20) break;
    n *= 2;
  }
  const per = [];
  for (let s = 0; s < samples; ++s) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; ++i) await f();
    per.push(Number(process.hrtime.bigint() - t0) * 1e-3 / n);
  }
  per.sort((x, y) => x - y);
  return per[Math.floor(samples / 2)];
}

async function main() {
  const a = args();
  let ort;
  try {
    ort = require(path.join(__dirname, 'ort', 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    console.log('# onnxruntime_float: absent (no bench/peers/ort/node_modules/onnxruntime-node: run scripts/install_ort_peer.sh)');
    return 0;
  }
  const version = require(path.join(__dirname, 'ort', 'node_modules', 'onnxruntime-node', 'package.json')).version;
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all'});
  const inputs = a.inputs.split(',').map((item) => {
    const eq = item.lastIndexOf('=');
    const [axes, c, rows] = item.slice(eq + 1).split(':');
    return {name: item.slice(0, eq), axes, c: Number(c), rows: Number(rows || 0)};
  });
  const shapeOf = (inp, b, t) => inp.axes === 'SBH' ? [inp.rows, b, inp.c] :
    [...inp.axes].map((x) => x === 'B' ? b : x === 'T' ? t : inp.c);
  const zeros = (shape) => new ort.Tensor('float32', new Float32Array(shape.reduce((p, q) => p * q, 1)), shape);
  // The check.
  const feeds = {};
  inputs.forEach((inp, k) => {
    const file = path.join(a.check, `in.${k}.npy`);
    if (fs.existsSync(file)) {
      const x = readNpy(file);
      feeds[inp.name] = new ort.Tensor('float32', x.data, x.shape);
    } else {
      feeds[inp.name] = zeros(shapeOf(inp, 1, 1));
    }
  });
  const outs = await session.run(feeds);
  let worst = 0;
  for (let k = 0; k < session.outputNames.length; ++k) {
    const ref = readNpy(path.join(a.check, `out.${k}.npy`));
    const got = outs[session.outputNames[k]].data;
    if (got.length !== ref.data.length) {
      console.log(`# onnxruntime_float: output ${k} has ${got.length} elements, fixq float ${ref.data.length}; not timed`);
      return 1;
    }
    for (let i = 0; i < got.length; ++i) worst = Math.max(worst, Math.abs(got[i] - ref.data[i]));
  }
  if (!(worst <= a.tolerance)) {
    console.log(`# onnxruntime_float: differs from fixq float by ${worst} > ${a.tolerance}; not timed`);
    return 1;
  }
  const stateIn = inputs.map((inp, k) => inp.axes === 'SBH' ? k : -1).filter((k) => k >= 0);
  const stateOut = a.stateOutputs ? a.stateOutputs.split(',').map(Number) : [];
  const carry = stateIn.length > 0 && stateIn.length === stateOut.length;
  console.log(`# onnxruntime_float: onnxruntime-node ${version}, CPU, intraOpNumThreads 1, interOpNumThreads 1, ` +
    `sequential, each call an awaited session.run; equals fixq float within ${worst.toExponential(1)} ` +
    `(<= ${a.tolerance}); ` + (carry ? 'one frame per call carries the graph\'s state inputs/outputs' :
    'one frame per call: a T = 1 call from zero state (the graph has no state inputs/outputs to carry), as issue 44\'s baseline'));
  const minS = a.quick ? 0.01 : 0.1;
  for (const b of a.batch.split(',').map(Number)) {
    for (const t of a.frames.split(',').map(Number)) {
      const f = {};
      for (const inp of inputs) {
        const shape = shapeOf(inp, b, t);
        const n = shape.reduce((p, q) => p * q, 1);
        const data = new Float32Array(n);
        if (inp.axes !== 'SBH') for (let i = 0; i < n; ++i) data[i] = normal();
        f[inp.name] = new ort.Tensor('float32', data, shape);
      }
      const us = await medianUs(async () => {
        const y = await session.run(f);
        if (carry) stateIn.forEach((k, j) => { f[inputs[k].name] = y[session.outputNames[stateOut[j]]]; });
      }, a.samples, minS);
      console.log(`${b},${t},onnxruntime_float,${(us / t).toFixed(3)}`);
    }
  }
  return 0;
}

main().then((rc) => process.exit(rc), (e) => { console.log(`# onnxruntime_float: failed (${String(e).split('\n')[0]})`); process.exit(1); });
