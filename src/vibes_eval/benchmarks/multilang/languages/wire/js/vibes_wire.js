// The wire between a trusted test program and the candidate it calls
// (docs/integrity.md, "The wire"): one frame per line, `\x02V <kind> <json>`, values as
// JSON with tags where JSON has no word for them ({"$t": tag, "v": value}).
//
// Both sides load this file, each its own copy. The test side treats everything it
// reads as hostile: `decode` builds fresh plain values (no prototype is ever set from the
// data, no code runs), and `Channel.receive` bounds what it reads. The candidate side
// only needs to be right for honest code: what a hostile candidate does to its own copy
// changes nothing but its own answers.
'use strict';

const fs = require('fs');

const MARK = '\x02V ';
const MAX_FRAME = 64 * 1024 * 1024; // bytes read for one answer, stray lines included
const MAX_DEPTH = 1000; // nesting of one value
const CHUNK = 1 << 16;

class WireError extends Error {}
WireError.prototype.name = 'WireError';

// -- values --------------------------------------------------------------------------

const SPECIAL_NUMBERS = new Map([['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity], ['-0', -0]]);

function encodeNumber(x) {
  if (Number.isNaN(x)) return { $t: 'num', v: 'NaN' };
  if (x === Infinity) return { $t: 'num', v: 'Infinity' };
  if (x === -Infinity) return { $t: 'num', v: '-Infinity' };
  if (Object.is(x, -0)) return { $t: 'num', v: '-0' };
  return x;
}

// A JavaScript value as JSON data. Objects that are not arrays, Maps, Sets or Dates go
// as their own enumerable string-keyed properties (what JSON.stringify and a loose
// deepEqual look at); functions and symbols cannot be carried.
function encode(value, depth = 0, seen = new Set()) {
  if (depth > MAX_DEPTH) throw new WireError('a value nested deeper than ' + MAX_DEPTH);
  switch (typeof value) {
    case 'string': case 'boolean': return value;
    case 'number': return encodeNumber(value);
    case 'undefined': return { $t: 'undef' };
    case 'bigint': return { $t: 'big', v: value.toString() };
    case 'function': case 'symbol':
      throw new WireError('a ' + typeof value + ' cannot be carried');
  }
  if (value === null) return null;
  if (seen.has(value)) throw new WireError('a cyclic value cannot be carried');
  seen.add(value);
  try {
    return encodeObject(value, depth + 1, seen);
  } finally {
    seen.delete(value);
  }
}

function encodeObject(value, depth, seen) {
  const enc = (x) => encode(x, depth, seen);
  if (Array.isArray(value)) {
    const out = [];
    for (let i = 0; i < value.length; i++) out.push(i in value ? enc(value[i]) : { $t: 'hole' });
    return out;
  }
  if (value instanceof Map) return { $t: 'map', v: Array.from(value, ([k, x]) => [enc(k), enc(x)]) };
  if (value instanceof Set) return { $t: 'set', v: Array.from(value, enc) };
  if (value instanceof Date) return { $t: 'date', v: enc(value.getTime()) };
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return enc(value.valueOf());
  }
  return { $t: 'obj', v: Object.keys(value).map((k) => [k, enc(value[k])]) };
}

function isTagged(data) {
  return data !== null && typeof data === 'object' && !Array.isArray(data);
}

// JSON data (from JSON.parse) back to a JavaScript value; anything but what `encode`
// writes throws.
function decode(data, depth = 0) {
  if (depth > MAX_DEPTH) throw new WireError('a value nested deeper than ' + MAX_DEPTH);
  if (data === null || typeof data === 'string' || typeof data === 'boolean') return data;
  if (typeof data === 'number') return data;
  if (Array.isArray(data)) return decodeArray(data, depth + 1);
  if (!isTagged(data)) throw new WireError('not a value');
  return decodeTagged(data, depth + 1);
}

function decodeArray(data, depth) {
  const out = new Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const item = data[i];
    if (isTagged(item) && item.$t === 'hole' && Object.keys(item).length === 1) continue;
    out[i] = decode(item, depth);
  }
  return out;
}

function pairs(v) {
  if (!Array.isArray(v) || !v.every((p) => Array.isArray(p) && p.length === 2)) {
    throw new WireError('malformed pairs');
  }
  return v;
}

function decodeTagged(data, depth) {
  const keys = Object.keys(data);
  const tag = data.$t;
  const ok = keys.every((k) => k === '$t' || k === 'v') && typeof tag === 'string';
  if (!ok || (tag !== 'undef' && !keys.includes('v'))) throw new WireError('malformed tag');
  const v = data.v;
  switch (tag) {
    case 'undef': return undefined;
    case 'num':
      if (!SPECIAL_NUMBERS.has(v)) throw new WireError('malformed number');
      return SPECIAL_NUMBERS.get(v);
    case 'big':
      if (typeof v !== 'string' || !/^-?[0-9]+$/.test(v)) throw new WireError('malformed bigint');
      return BigInt(v);
    case 'obj': return decodeObject(pairs(v), depth);
    case 'map': return new Map(pairs(v).map(([k, x]) => [decode(k, depth), decode(x, depth)]));
    case 'set':
      if (!Array.isArray(v)) throw new WireError('malformed set');
      return new Set(v.map((x) => decode(x, depth)));
    case 'date': {
      const t = decode(v, depth);
      if (typeof t !== 'number') throw new WireError('malformed date');
      return new Date(t);
    }
  }
  throw new WireError('unknown tag');
}

function decodeObject(entries, depth) {
  const out = {};
  const names = new Set();
  for (const [k, x] of entries) {
    if (typeof k !== 'string' || names.has(k)) throw new WireError('malformed object key');
    names.add(k);
    // defined, never assigned: a key "__proto__" is an own property like any other
    Object.defineProperty(out, k, { value: decode(x, depth), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

// -- frames --------------------------------------------------------------------------

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

function retrying(op) {
  for (;;) {
    try {
      return op();
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(PAUSE, 0, 0, 1); // a non-blocking pipe with nothing to do yet
    }
  }
}

// Frames on two file descriptors, read and written synchronously.
class Channel {
  constructor(fdIn, fdOut) {
    this.fdIn = fdIn;
    this.fdOut = fdOut;
    this.chunks = []; // read, not yet a whole line; only the last may hold a newline
    this.buf = Buffer.allocUnsafe(CHUNK);
  }

  send(kind, json, lead = '') {
    const data = Buffer.from(lead + MARK + kind + ' ' + json + '\n', 'utf8');
    let off = 0;
    while (off < data.length) off += retrying(() => fs.writeSync(this.fdOut, data, off));
  }

  // The next line (without its newline), null at the end of input, at most `limit` bytes.
  readLine(limit) {
    let size = this.chunks.reduce((n, c) => n + c.length, 0);
    for (;;) {
      const last = this.chunks[this.chunks.length - 1];
      const nl = last === undefined ? -1 : last.indexOf(10);
      if (nl >= 0) {
        const line = Buffer.concat([...this.chunks.slice(0, -1), last.subarray(0, nl)]);
        const rest = last.subarray(nl + 1);
        this.chunks = rest.length ? [rest] : [];
        if (line.length > limit) throw new WireError('a frame over ' + MAX_FRAME + ' bytes');
        return line;
      }
      if (size > limit) throw new WireError('a frame over ' + MAX_FRAME + ' bytes');
      const n = retrying(() => fs.readSync(this.fdIn, this.buf, 0, CHUNK, null));
      if (n === 0) return null;
      this.chunks.push(Buffer.from(this.buf.subarray(0, n)));
      size += n;
    }
  }

  // Read and drop everything until the end of input.
  discard() {
    this.chunks = [];
    while (retrying(() => fs.readSync(this.fdIn, this.buf, 0, CHUNK, null)) > 0);
  }

  // The next frame: [kind, json text]; lines without the marker are skipped. Throws at
  // the end of input or past MAX_FRAME bytes.
  receive() {
    let left = MAX_FRAME;
    for (;;) {
      const line = this.readLine(left);
      if (line === null) throw new WireError('the input ended');
      left -= line.length + 1;
      const text = line.toString('utf8');
      if (!text.startsWith(MARK)) continue;
      const space = text.indexOf(' ', MARK.length);
      if (space < 0) throw new WireError('a malformed frame');
      return [text.slice(MARK.length, space), text.slice(space + 1)];
    }
  }
}

function parse(json) {
  try {
    return JSON.parse(json);
  } catch (e) {
    throw new WireError('a frame that is not JSON');
  }
}

module.exports = { MARK, MAX_FRAME, MAX_DEPTH, WireError, encode, decode, parse, Channel };
