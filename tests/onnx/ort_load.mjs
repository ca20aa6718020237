// ONNX Runtime's WebAssembly build, loaded offline from this directory's
// node_modules: one thread, no proxy worker, nothing fetched. Shared by
// ort_run.mjs and classify.mjs; `fail` reports a one-line reason and exits.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

export const here = path.dirname(fileURLToPath(import.meta.url));

export function failer(tool) {
  return (msg) => {
    process.stderr.write(`${tool}: ${msg}\n`);
    process.exit(1);
  };
}

// A package of this directory's node_modules, whatever the caller's cwd.
export function requireHere(name, fail) {
  const require = createRequire(path.join(here, 'package.json'));
  try {
    return require(name);
  } catch {
    fail(`${name} is not installed under ${here}/node_modules (run: npm ci --prefix ${here})`);
  }
}

export async function loadOrt(fail) {
  const require = createRequire(path.join(here, 'package.json'));
  let entry;
  try {
    entry = require.resolve('onnxruntime-web');
  } catch {
    fail(`onnxruntime-web is not installed under ${here}/node_modules (run: npm ci --prefix ${here})`);
  }
  // The node entry is ort.node.min.js (CJS) next to the ESM one; import the ESM.
  const dist = path.dirname(entry);
  const esm = path.join(dist, 'ort.node.min.mjs');
  const ort = await import(pathToFileURL(fs.existsSync(esm) ? esm : entry).href);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = pathToFileURL(dist + path.sep).href;
  ort.env.logLevel = 'error';
  return ort;
}
