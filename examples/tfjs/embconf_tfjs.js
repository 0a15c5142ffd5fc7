#!/usr/bin/env node
// TensorFlow.js's own embedding lookup served over the embconf wire protocol
// (spec/PROTOCOL.md): one JSON message per line on stdin, one reply per line on stdout.
//
//   node examples/tfjs/embconf_tfjs.js          tf.gather(table, ids), its gradient by tf.grad
//   node examples/tfjs/embconf_tfjs.js layer    tf.layers.embedding holding the table, its
//                                               gradient by tf.variableGrads
//
// Everything numeric is TensorFlow.js's (the pure-JS CPU backend): this peer decodes the
// arrays, calls the library and encodes its results. It adds no id, shape or dtype check.
// TensorFlow.js has float32 tables and int32 ids only: int64 ids from the runner become
// JavaScript numbers in an int32 tensor, narrowed as TensorFlow.js narrows them (2^32 -> 0).
// Its own refusals name the spec's kinds where they mean exactly that kind (an index outside
// the table; an upstream gradient whose shape is not the output's); any other exception names
// no kind: it is the `exception` reply of protocol minor 2 (the outcome error), and the peer goes on.
'use strict';

const readline = require('readline');

// TensorFlow.js greets Node.js users on stdout; stdout carries protocol messages only.
console.log = console.error;
const tf = require('@tensorflow/tfjs');

const PROTOCOL = 1;
const PROTOCOL_MINOR = 2; // the `exception` reply (an untyped failure, and the peer keeps running)
const TARGETS = ['gather', 'layer'];
const OUT_OF_RANGE = /^GatherV2: the index value -?\d+ is not in \[0, -?\d+\]$/;
const DY_SHAPE = /^The shape of dy passed in grad/;

class EmbeddingError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind; // one of the spec's error kinds (spec/vocabulary.json)
  }
}

// TensorFlow.js's own refusals as the spec's kinds; anything else is rethrown as it is.
function typed(fn) {
  try {
    return fn();
  } catch (err) {
    const message = String(err && err.message);
    if (OUT_OF_RANGE.test(message)) throw new EmbeddingError('index_out_of_range', message);
    if (DY_SHAPE.test(message)) throw new EmbeddingError('shape_mismatch', message);
    throw err;
  }
}

// ---------------------------------------------------------------- arrays

const READERS = {
  float32: [4, (v, o) => v.getFloat32(o, true)],
  float64: [8, (v, o) => v.getFloat64(o, true)],
  int32: [4, (v, o) => v.getInt32(o, true)],
  int64: [8, (v, o) => Number(v.getBigInt64(o, true))],
};
const NON_FINITE = { nan: NaN, inf: Infinity, '-inf': -Infinity };

// {dtype, shape, base64 | data} -> {dtype, shape, values: number[]}
function decodeArray(encoded) {
  const [size, read] = READERS[encoded.dtype] || [];
  if (!read) throw new Error(`unknown dtype ${encoded.dtype}`);
  if (typeof encoded.base64 !== 'string') {
    const values = encoded.data.map((x) => (typeof x === 'string' ? NON_FINITE[x] : Number(x)));
    return { dtype: encoded.dtype, shape: encoded.shape, values };
  }
  const bytes = Buffer.from(encoded.base64, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const values = new Array(bytes.length / size);
  for (let i = 0; i < values.length; i++) values[i] = read(view, i * size);
  return { dtype: encoded.dtype, shape: encoded.shape, values };
}

const isArray = (value) => value !== null && typeof value === 'object' && 'dtype' in value && 'shape' in value;

// A table or an upstream gradient: float32, TensorFlow.js's one float dtype.
const floatTensor = (array) => tf.tensor(array.values, array.shape, 'float32');
// Ids: an int32 tensor of integer ids (TensorFlow.js's index dtype), float ids as float32.
const idsTensor = (ids) => tf.tensor(ids.values, ids.shape, ids.dtype.startsWith('float') ? 'float32' : 'int32');

function encodeTensor(tensor) {
  const values = tensor.dataSync();
  if (tensor.dtype !== 'float32') throw new Error(`unexpected output dtype ${tensor.dtype}`);
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return { dtype: 'float32', shape: tensor.shape.slice(), base64: bytes.toString('base64') };
}

// ---------------------------------------------------------------- the two implementations

const gather = {
  name: 'TensorFlow.js tf.gather + tf.grad',
  features: ['int32_ids'],
  embedding_forward({ weight, ids }) {
    return { output: typed(() => tf.gather(floatTensor(weight), idsTensor(ids))) };
  },
  embedding_backward({ weight, ids, grad_output }) {
    const idsT = idsTensor(ids);
    const grad = tf.grad((table) => tf.gather(table, idsT));
    return { grad_weight: typed(() => grad(floatTensor(weight), floatTensor(grad_output))) };
  },
};

function embeddingLayer(weight) {
  const [rows, dim] = weight.shape;
  return tf.layers.embedding({ inputDim: rows, outputDim: dim, weights: [floatTensor(weight)] });
}

const layer = {
  name: 'TensorFlow.js tf.layers.embedding',
  features: ['int32_ids', 'float_ids'], // the layer casts any ids to int32 itself
  embedding_forward({ weight, ids }) {
    return { output: typed(() => embeddingLayer(weight).apply(idsTensor(ids))) };
  },
  // The gradient a training step takes: tf.variableGrads of sum(output * grad_output).
  embedding_backward({ weight, ids, grad_output }) {
    const embedding = embeddingLayer(weight);
    const idsT = idsTensor(ids);
    const dy = floatTensor(grad_output);
    typed(() => embedding.apply(idsT)); // the first call builds the layer: its table becomes a variable
    const [table] = embedding.trainableWeights.map((w) => w.read());
    const { grads } = typed(() => tf.variableGrads(() => tf.sum(tf.mul(embedding.apply(idsT), dy)), [table]));
    return { grad_weight: grads[table.name] };
  },
};

// ---------------------------------------------------------------- the protocol

const OPERATIONS = ['embedding_forward', 'embedding_backward'];

function hello(impl) {
  return {
    protocol: PROTOCOL,
    protocol_minor: PROTOCOL_MINOR,
    implementation: {
      name: impl.name,
      version: tf.version.tfjs,
      language: 'javascript',
      backend: tf.getBackend(),
      capabilities: { operations: OPERATIONS, features: impl.features, sinusoid_convention: 'interleaved' },
    },
  };
}

function run(impl, { seq, operation, inputs }) {
  if (!OPERATIONS.includes(operation)) return { seq, skipped: { reason: `TensorFlow.js peer has no ${operation}` } };
  const decoded = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, isArray(v) ? decodeArray(v) : v]));
  try {
    return tf.tidy(() => {
      const outputs = impl[operation](decoded);
      return { seq, outputs: Object.fromEntries(Object.entries(outputs).map(([k, t]) => [k, encodeTensor(t)])) };
    });
  } catch (err) {
    if (err instanceof EmbeddingError) return { seq, error: { kind: err.kind, message: err.message } };
    // any other failure names no error kind: the `exception` reply (protocol minor 2), and the peer goes on
    const message = String(err && err.message !== undefined ? err.message : err);
    return { seq, exception: { type: (err && err.name) || typeof err, message, traceback: String((err && err.stack) || '') } };
  }
}

async function main() {
  const target = process.argv[2] || 'gather';
  if (!TARGETS.includes(target)) {
    process.stderr.write(`usage: embconf_tfjs.js [${TARGETS.join('|')}] (got ${target})\n`);
    process.exit(2);
  }
  const impl = target === 'layer' ? layer : gather;
  const pending = [];
  let ready = false;
  const handle = (line) => {
    const message = JSON.parse(line);
    if (message.cmd === 'stop') process.exit(0);
    const reply = message.cmd === 'start' ? hello(impl) : run(impl, message);
    process.stdout.write(JSON.stringify(reply) + '\n');
  };
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => (ready ? handle(line) : pending.push(line)));
  lines.on('close', () => {
    if (ready) process.exit(0);
    pending.push(null);
  });
  await tf.setBackend('cpu');
  await tf.ready();
  ready = true;
  for (const line of pending) {
    if (line === null) process.exit(0);
    handle(line);
  }
}

main();
