// The ort-js backend's Node process (conformance/backends/ort_js.py starts one per isolated child).
//
// It answers one request at a time on two pipes (requests in, answers out), in the isolated
// runner's framing: a little-endian u64 length of the rest, a u32 length of the JSON header, the
// header (with the byte sizes of the buffers that follow), then the buffers. Nothing received is
// ever evaluated: a request is a model's bytes and its inputs as element type, shape and bytes.
//
//   argv: <node_modules directory> <ep: cpu | webgpu | wasm> <requests fd> <answers fd>
//   first request: {"pin": true}, buffers [a tiny model]: a session kept for the process's life
//     (on webgpu, releasing the last session destroys the device: every model would pay for a new one)
//   then: {"inputs": [{name, dtype, shape}]}, buffers [model, input...]
//   answers: {"kind": "ready", "version", "ep", "adapter"} | {"kind": "outputs", "outputs": [{name, dtype,
//     shape}]} + buffers | {"kind": "error", "message"}
'use strict';

const fs = require('fs');
const path = require('path');

const [modules, ep, requestsFd, answersFd] = process.argv.slice(2);
const IN_FD = Number(requestsFd);
const OUT_FD = Number(answersFd);
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function load() {
  const name = ep === 'wasm' ? 'onnxruntime-web' : 'onnxruntime-node';
  const ort = require(path.join(modules, name));
  if (ep === 'wasm') {
    ort.env.wasm.numThreads = 1; // no worker threads: one item per process, the runner runs processes side by side
  }
  const version = require(path.join(modules, name, 'package.json')).version;
  return { ort, version };
}

function readExactly(size) {
  const buffer = Buffer.alloc(size);
  let done = 0;
  while (done < size) {
    let n;
    try {
      n = fs.readSync(IN_FD, buffer, done, size - done, null);
    } catch (e) {
      if (e.code === 'EAGAIN') continue;
      throw e;
    }
    if (n === 0) return null;
    done += n;
  }
  return buffer;
}

function readFrame() {
  const prefix = readExactly(12);
  if (prefix === null) return null;
  const length = Number(prefix.readBigUInt64LE(0));
  const headerLength = prefix.readUInt32LE(8);
  const payload = readExactly(length);
  if (payload === null || headerLength > length) throw new Error('a truncated or malformed frame');
  const header = JSON.parse(payload.subarray(0, headerLength).toString('utf8'));
  const buffers = [];
  let offset = headerLength;
  for (const size of header.buffers) {
    if (!Number.isSafeInteger(size) || size < 0 || offset + size > length) {
      throw new Error('buffer sizes do not add up');
    }
    buffers.push(payload.subarray(offset, offset + size));
    offset += size;
  }
  if (offset !== length) throw new Error('buffer sizes do not add up');
  return { header, buffers };
}

function writeFrame(header, buffers = []) {
  const head = Buffer.from(JSON.stringify({ ...header, buffers: buffers.map((b) => b.byteLength) }), 'utf8');
  const total = head.length + buffers.reduce((sum, b) => sum + b.byteLength, 0);
  const prefix = Buffer.alloc(12);
  prefix.writeBigUInt64LE(BigInt(total), 0);
  prefix.writeUInt32LE(head.length, 8);
  for (const chunk of [prefix, head, ...buffers]) {
    let done = 0;
    while (done < chunk.byteLength) {
      try {
        done += fs.writeSync(OUT_FD, chunk, done, chunk.byteLength - done);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
  }
}

function tensor(ort, description, bytes) {
  const TypedArray = ARRAYS[description.dtype];
  if (TypedArray === undefined) {
    throw new Error(`Unsupported data type: ${description.dtype} cannot cross to onnxruntime's JavaScript API`);
  }
  const copy = new Uint8Array(bytes); // aligned for the typed array
  const data = new TypedArray(copy.buffer, 0, copy.byteLength / TypedArray.BYTES_PER_ELEMENT);
  return new ort.Tensor(description.dtype, description.dtype === 'bool' ? copy : data, description.shape);
}

async function session(ort, modelBytes) {
  const options = { executionProviders: [ep], logSeverityLevel: 4 };
  if (ep === 'cpu') options.intraOpNumThreads = 1;
  return ort.InferenceSession.create(new Uint8Array(modelBytes), options);
}

async function answer(ort, header, buffers) {
  const [modelBytes, ...data] = buffers;
  const created = await session(ort, modelBytes);
  try {
    const feeds = {};
    header.inputs.forEach((description, index) => {
      feeds[description.name] = tensor(ort, description, data[index]);
    });
    const results = await created.run(feeds);
    const outputs = [];
    const out = [];
    for (const name of created.outputNames) {
      const result = results[name];
      const values = result.data;
      outputs.push({ name, dtype: result.type, shape: Array.from(result.dims, Number) });
      out.push(Buffer.from(values.buffer, values.byteOffset, values.byteLength));
    }
    return [{ kind: 'outputs', outputs }, out];
  } finally {
    await created.release();
  }
}

async function main() {
  let ort;
  let version;
  try {
    ({ ort, version } = load());
  } catch (e) {
    writeFrame({ kind: 'failed', message: `cannot load onnxruntime from ${modules}: ${e.message}` });
    return;
  }
  let pinned = null;
  for (let request = readFrame(); request !== null; request = readFrame()) {
    const { header, buffers } = request;
    try {
      if (header.pin) {
        pinned = await session(ort, buffers[0]);
        writeFrame({ kind: 'ready', version, ep });
        continue;
      }
      const [reply, out] = await answer(ort, header, buffers);
      writeFrame(reply, out);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      writeFrame({ kind: pinned === null && header.pin ? 'failed' : 'error', message: message.slice(0, 4000) });
    }
  }
  if (pinned !== null) await pinned.release();
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`ort-js server: ${e && e.stack ? e.stack : e}\n`);
  process.exit(3);
});
