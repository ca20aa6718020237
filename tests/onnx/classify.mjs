#!/usr/bin/env node
// Classifies pictures with a model mt exported, the way a deployment feeds
// it (README, "Models as files"): the picture decoded (PNG, JPEG), turned
// upright as its EXIF orientation says, shrunk to the model's input by
// averaging the area each pixel covers and rounded to bytes as mt does,
// scaled as the file's metadata says ((image - mt.input_mean) /
// mt.input_std, a number or a JSON list per channel), run in ONNX Runtime
// (WebAssembly build, offline) and named by mt.class_names.
//
//   node classify.mjs MODEL.onnx IMAGE [IMAGE...]
//
// One JSON line per picture on stdout:
//   {"image":"cat.jpg","class":"cat","index":0,"probability":0.93}
// Any failure: a one-line reason on stderr and exit 1. Needs
// `npm ci --prefix tests/onnx` (onnxruntime-web, pngjs, jpeg-js).
import fs from 'node:fs';
import { failer, loadOrt, requireHere } from './ort_load.mjs';

const USAGE = 'usage: node classify.mjs MODEL.onnx IMAGE [IMAGE...]';
const fail = failer('classify');

// Protobuf fields of `buf` as [number, value]: varints as numbers, the
// length-delimited as bytes. Enough of the wire format for ModelProto's
// metadata and input shape, which ONNX Runtime's web API does not expose.
function fields(buf) {
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0;
    let mul = 1;
    let b;
    do {
      if (i >= buf.length) throw new Error('truncated');
      b = buf[i++];
      v += (b & 0x7f) * mul;
      mul *= 128;
    } while (b & 0x80);
    return v;
  };
  while (i < buf.length) {
    const key = varint();
    const type = key % 8;
    const number = Math.floor(key / 8);
    if (type === 0) out.push([number, varint()]);
    else if (type === 2) {
      const n = varint();
      out.push([number, buf.subarray(i, i + n)]);
      i += n;
    } else if (type === 1) i += 8;
    else if (type === 5) i += 4;
    else throw new Error(`wire type ${type}`);
  }
  return out;
}
const all = (buf, number) => fields(buf).filter(([n]) => n === number).map(([, v]) => v);
const first = (buf, number) => all(buf, number)[0];
const text = (bytes) => (bytes ? Buffer.from(bytes).toString('utf8') : '');

// ModelProto: metadata_props = 14 (key 1, value 2); graph = 7, its inputs
// 11 (name 1, type 2 -> tensor_type 1 -> shape 2 -> dim 1 -> dim_value 1).
function describe(model, inputName) {
  const meta = {};
  for (const entry of all(model, 14)) meta[text(first(entry, 1))] = text(first(entry, 2));
  for (const input of all(first(model, 7) ?? new Uint8Array(), 11)) {
    if (text(first(input, 1)) !== inputName) continue;
    const shape = first(first(first(input, 2) ?? new Uint8Array(), 1) ?? new Uint8Array(), 2);
    const dims = shape ? all(shape, 1).map((d) => first(d, 1)) : [];
    return { meta, dims };
  }
  return { meta, dims: [] };
}

// mt's one format (model_io/input_scaling_metadata.h): a number or a JSON
// list; the comma list older exports wrote reads too.
function scaling(meta, key, channels) {
  const value = meta[key];
  if (value === undefined) fail(`the model has no ${key} metadata: how to scale its input is unknown`);
  let v;
  try {
    v = JSON.parse(value);
  } catch {
    v = /^[^,\s]+(,[^,\s]+)*$/.test(value) ? value.split(',').map(Number) : null;
  }
  if (typeof v === 'number') v = [v];
  if (!Array.isArray(v) || !v.every(Number.isFinite) || (v.length !== 1 && v.length !== channels))
    fail(`metadata ${key} '${value}' is not a number or a JSON list of one number per channel`);
  return Array.from({ length: channels }, (_, c) => v[v.length === 1 ? 0 : c]);
}

// EXIF orientation (tag 0x0112) from jpeg-js's APP1 bytes; 1 when absent.
function orientation(exif) {
  if (!exif) return 1;
  const b = Buffer.from(exif);
  let t = -1;
  for (let i = 0; i + 4 <= Math.min(b.length, 16); i++) {
    const s = b.toString('latin1', i, i + 4);
    if (s === 'II*\0' || s === 'MM\0*') {
      t = i;
      break;
    }
  }
  if (t < 0) return 1;
  const le = b[t] === 0x49;
  const u16 = (o) => (le ? b.readUInt16LE(t + o) : b.readUInt16BE(t + o));
  const u32 = (o) => (le ? b.readUInt32LE(t + o) : b.readUInt32BE(t + o));
  try {
    const ifd = u32(4);
    for (let k = 0; k < u16(ifd); k++) {
      const e = ifd + 2 + 12 * k;
      if (u16(e) === 0x0112) return u16(e + 8);
    }
  } catch {
    return 1;
  }
  return 1;
}

// RGBA bytes, upright.
function decode(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    fail(`cannot read ${file}: ${e.message}`);
  }
  let img;
  let turn = 1;
  try {
    if (bytes[0] === 0x89 && bytes.toString('latin1', 1, 4) === 'PNG') {
      img = requireHere('pngjs', fail).PNG.sync.read(bytes);
    } else if (bytes[0] === 0xff && bytes[1] === 0xd8) {
      img = requireHere('jpeg-js', fail).decode(bytes, { useTArray: true, formatAsRGBA: true });
      turn = orientation(img.exifBuffer);
    } else {
      fail(`${file}: not a PNG or JPEG file`);
    }
  } catch (e) {
    fail(`${file}: does not decode: ${e.message}`);
  }
  const { width: w, height: h, data } = img;
  if (turn < 2 || turn > 8) return { width: w, height: h, data };
  const swap = turn >= 5;
  const W = swap ? h : w;
  const H = swap ? w : h;
  const out = new Uint8Array(W * H * 4);
  // Where upright pixel (x, y) lies in the stored picture, per orientation.
  const from = {
    2: (x, y) => [w - 1 - x, y], 3: (x, y) => [w - 1 - x, h - 1 - y], 4: (x, y) => [x, h - 1 - y],
    5: (x, y) => [y, x], 6: (x, y) => [y, h - 1 - x], 7: (x, y) => [w - 1 - y, h - 1 - x],
    8: (x, y) => [w - 1 - y, x],
  }[turn];
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const [sx, sy] = from(x, y);
      out.set(data.subarray((sy * w + sx) * 4, (sy * w + sx) * 4 + 4), (y * W + x) * 4);
    }
  }
  return { width: W, height: H, data: out };
}

// For each output index, the input indices it covers with their weights.
function areaWeights(inSize, outSize) {
  const scale = inSize / outSize;
  return Array.from({ length: outSize }, (_, o) => {
    const a = o * scale;
    const b = (o + 1) * scale;
    const ws = [];
    for (let s = Math.floor(a); s < Math.min(inSize, Math.ceil(b)); s++) {
      const part = Math.min(b, s + 1) - Math.max(a, s);
      if (part > 0) ws.push([s, part / scale]);
    }
    return ws;
  });
}

// NCHW floats of one picture for a [1, C, H, W] input.
function tensor(img, c, h, w, mean, std) {
  const grey = (p) => 0.299 * img.data[p] + 0.587 * img.data[p + 1] + 0.114 * img.data[p + 2];
  const cols = areaWeights(img.width, w);
  const rows = areaWeights(img.height, h);
  const x = new Float32Array(c * h * w);
  for (let ch = 0; ch < c; ch++) {
    for (let oy = 0; oy < h; oy++) {
      for (let ox = 0; ox < w; ox++) {
        let sum = 0;
        for (const [sy, wy] of rows[oy]) {
          for (const [sx, wx] of cols[ox]) {
            const p = (sy * img.width + sx) * 4;
            sum += wy * wx * (c === 1 ? grey(p) : img.data[p + ch]);
          }
        }
        const byte = Math.min(255, Math.max(0, Math.round(sum)));  // mt caches bytes
        x[(ch * h + oy) * w + ox] = (byte / 255 - mean[ch]) / std[ch];
      }
    }
  }
  return x;
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('-h') || args.includes('--help')) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (args.length < 2 || args.some((a) => a.startsWith('--'))) fail(USAGE);
  const [modelFile, ...images] = args;
  let model;
  try {
    model = fs.readFileSync(modelFile);
  } catch (e) {
    fail(`cannot read model ${modelFile}: ${e.message}`);
  }
  const ort = await loadOrt(fail);
  let session;
  try {
    session = await ort.InferenceSession.create(new Uint8Array(model), { executionProviders: ['wasm'] });
  } catch (e) {
    fail(`cannot load model ${modelFile}: ${e.message ?? e}`);
  }
  const inName = session.inputNames[0];
  let info;
  try {
    info = describe(model, inName);
  } catch (e) {
    fail(`${modelFile}: cannot read its metadata: ${e.message}`);
  }
  const [, c, h, w] = info.dims;
  if (info.dims.length !== 4 || !(c >= 1 && c <= 3 && h > 0 && w > 0))
    fail(`${modelFile}: input '${inName}' is not [N, C, H, W] pictures with fixed C, H and W`);
  const mean = scaling(info.meta, 'mt.input_mean', c);
  const std = scaling(info.meta, 'mt.input_std', c);
  let names = null;
  if (info.meta['mt.class_names'] !== undefined) {
    try {
      names = JSON.parse(info.meta['mt.class_names']);
    } catch {
      fail(`metadata mt.class_names '${info.meta['mt.class_names']}' is not a JSON list of names`);
    }
  }
  for (const file of images) {
    const input = new ort.Tensor('float32', tensor(decode(file), c, h, w, mean, std), [1, c, h, w]);
    const out = await session.run({ [inName]: input });
    const logits = Array.from(out[session.outputNames[0]].data);
    const top = logits.indexOf(Math.max(...logits));
    const sum = logits.reduce((s, l) => s + Math.exp(l - logits[top]), 0);
    process.stdout.write(JSON.stringify({
      image: file,
      class: names ? names[top] : String(top),
      index: top,
      probability: Number((1 / sum).toFixed(4)),
    }) + '\n');
  }
}

main().catch((e) => fail(e?.stack ?? String(e)));
