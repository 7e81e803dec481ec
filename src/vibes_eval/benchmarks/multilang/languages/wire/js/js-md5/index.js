// A stand-in for the npm package js-md5, which HumanEval-X's own evaluation environment
// installs (JavaScript/162's canonical solution calls `require('js-md5')`): the same
// calls (md5(text), md5.hex, .array, .digest, .arrayBuffer, .buffer, .base64,
// md5.create().update(...).hex()...) over node's own MD5. Strings are hashed as UTF-8,
// as js-md5 does.
'use strict';

const crypto = require('crypto');

function bytes(message) {
  if (typeof message === 'string') return Buffer.from(message, 'utf8');
  if (message instanceof ArrayBuffer) return Buffer.from(new Uint8Array(message));
  if (ArrayBuffer.isView(message)) return Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  if (Array.isArray(message)) return Buffer.from(message);
  throw new Error('input is invalid type');
}

function hasher() {
  const hash = crypto.createHash('md5');
  let digest = null;
  const out = () => (digest = digest || hash.digest());
  const h = {
    update(message) {
      if (digest) throw new Error('finalize already called');
      hash.update(bytes(message));
      return h;
    },
    hex: () => out().toString('hex'),
    toString: () => out().toString('hex'),
    array: () => Array.from(out()),
    digest: () => Array.from(out()),
    arrayBuffer: () => new Uint8Array(out()).buffer,
    buffer: () => new Uint8Array(out()).buffer,
    base64: () => out().toString('base64'),
  };
  return h;
}

function md5(message) {
  return hasher().update(message).hex();
}
for (const name of ['hex', 'array', 'digest', 'arrayBuffer', 'buffer', 'base64']) {
  md5[name] = (message) => hasher().update(message)[name]();
}
md5.create = hasher;
md5.update = (message) => hasher().update(message);

module.exports = md5;
