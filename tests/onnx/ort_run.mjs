#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime's WebAssembly build (onnxruntime-web),
// offline: the .wasm comes from this directory's node_modules, one thread,
// no proxy worker, nothing fetched.
//
//   node ort_run.mjs MODEL.onnx INPUT.f32 OUTPUT.f32 --shape N,C,H,W [--output NAME]
//
// INPUT.f32 is raw little-endian float32 of the given shape, fed to the
// model's first input; the first output (or --output NAME) is written to
// OUTPUT.f32 the same way, and its dims printed as JSON on stdout:
//   {"output":"logits","dims":[4,10]}
// Any failure: a one-line reason on stderr and exit 1.
import fs from 'node:fs';
import { failer, loadOrt } from './ort_load.mjs';

const USAGE = 'usage: node ort_run.mjs MODEL.onnx INPUT.f32 OUTPUT.f32 --shape N,C,H,W [--output NAME]';
const fail = failer('ort_run');

function parseArgs(argv) {
  const pos = [];
  let shape = null;
  let output = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (a === '--shape') shape = value();
    else if (a.startsWith('--shape=')) shape = a.slice(8);
    else if (a === '--output') output = value();
    else if (a.startsWith('--output=')) output = a.slice(9);
    else if (a === '-h' || a === '--help') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    else if (a.startsWith('--')) fail(`unknown option ${a}\n${USAGE}`);
    else pos.push(a);
  }
  if (pos.length !== 3) fail(`expected MODEL INPUT OUTPUT, got ${pos.length} argument(s)\n${USAGE}`);
  if (shape === null) fail(`--shape is required\n${USAGE}`);
  const dims = shape.split(',').map((s) => {
    if (!/^[0-9]+$/.test(s.trim()) || Number(s) <= 0) fail(`bad --shape ${shape}: want positive integers like 4,3,32,32`);
    return Number(s);
  });
  return { model: pos[0], input: pos[1], out: pos[2], dims, output };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let modelBytes;
  try {
    modelBytes = fs.readFileSync(a.model);
  } catch (e) {
    fail(`cannot read model ${a.model}: ${e.message}`);
  }
  let raw;
  try {
    raw = fs.readFileSync(a.input);
  } catch (e) {
    fail(`cannot read input ${a.input}: ${e.message}`);
  }
  const count = a.dims.reduce((x, y) => x * y, 1);
  if (raw.length !== count * 4) {
    fail(`input ${a.input} has ${raw.length} bytes; shape [${a.dims}] needs ${count * 4}`);
  }
  // Copy into an aligned buffer, read as little-endian whatever the host.
  const data = new Float32Array(count);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let i = 0; i < count; i++) data[i] = view.getFloat32(i * 4, true);

  const ort = await loadOrt(fail);
  let session;
  try {
    session = await ort.InferenceSession.create(new Uint8Array(modelBytes), {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'all',
    });
  } catch (e) {
    fail(`cannot load model ${a.model}: ${e.message ?? e}`);
  }
  const inName = session.inputNames[0];
  const outName = a.output ?? session.outputNames[0];
  if (!session.outputNames.includes(outName)) {
    fail(`model has no output ${outName} (outputs: ${session.outputNames.join(', ')})`);
  }
  let results;
  try {
    results = await session.run({ [inName]: new ort.Tensor('float32', data, a.dims) }, [outName]);
  } catch (e) {
    fail(`run failed: ${e.message ?? e}`);
  }
  const t = results[outName];
  if (t.type !== 'float32') fail(`output ${outName} is ${t.type}, not float32`);
  const outBuf = Buffer.alloc(t.data.length * 4);
  for (let i = 0; i < t.data.length; i++) outBuf.writeFloatLE(t.data[i], i * 4);
  try {
    fs.writeFileSync(a.out, outBuf);
  } catch (e) {
    fail(`cannot write ${a.out}: ${e.message}`);
  }
  process.stdout.write(JSON.stringify({ input: inName, output: outName, dims: t.dims.map(Number) }) + '\n');
  await session.release?.();
}

main().catch((e) => fail(e?.stack ?? String(e)));
