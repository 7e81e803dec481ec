// The trusted side of a JavaScript test program (docs/integrity.md): loaded first by
// test.js, before the prompt's helpers, the stub and the task's tests. No sample's code
// ever runs in this process; the candidate is reached only through `call`.
//
// - fd 1 carries frames only: the tests' console and process.stdout go to stderr;
// - console.assert throws (in node it only prints), and a failed one is remembered, so
//   a test that caught the throw still cannot finish as passed;
// - a broken channel (malformed, oversized, EOF) fails the call and every later one;
// - `done` prints the done marker last on stderr only when the tests returned normally
//   with nothing failed; any uncaught error prints one `vibes-test: failed:` line and
//   exits 1.
'use strict';

const fs = require('fs');
const util = require('util');
const wire = require('./vibes_wire.js');

let DONE = null; // the marker the host reads (base.DONE_MARKER), given by test.js
const PREFIX = 'vibes-test: failed: ';
const channel = new wire.Channel(0, 1);
const state = { broken: null, failed: null };
const source = fs.readFileSync(require.main.filename, 'utf8').split('\n');

class CandidateError extends Error {}

function show(value) {
  return util.inspect(value, { depth: 4, breakLength: Infinity, maxArrayLength: 20, maxStringLength: 80 });
}

// The statement of the test (test.js) an error was thrown from, as written (an
// assertion may span lines: read on until its parentheses close).
function testLine(err) {
  const file = require.main.filename;
  for (const frame of String((err && err.stack) || '').split('\n')) {
    const at = frame.lastIndexOf(file + ':');
    if (at < 0) continue;
    const n = parseInt(frame.slice(at + file.length + 1), 10);
    if ((source[n - 1] || '').includes('__vibes.call(')) continue; // the stub: its caller says more
    const text = statement(source.slice(n - 1, n + 7).join(' '));
    if (text) return text.length > 200 ? text.slice(0, 197) + '...' : text;
  }
  return '';
}

function statement(text) {
  const flat = text.replace(/\s+/g, ' ').trim();
  let depth = 0;
  for (let i = 0; i < flat.length; i++) {
    if (flat[i] === '(') depth++;
    else if (flat[i] === ')' && --depth === 0) return flat.slice(0, i + 1);
  }
  return flat;
}

function describe(err) {
  const line = testLine(err);
  if (err instanceof CandidateError) return err.message + (line ? ' (at ' + line + ')' : '');
  const where = line ? ': ' + line : '';
  if (err && err.vibesAssert) return 'assertion failed' + where;
  if (err && err.code === 'ERR_ASSERTION') {
    return 'assertion failed' + where + ' (got ' + show(err.actual) + ', expected ' + show(err.expected) + ')';
  }
  const name = err instanceof Error ? err.name + ': ' + err.message : 'threw ' + show(err);
  return name.split('\n')[0] + (line ? ' at ' + line : '');
}

function fail(err) {
  fs.writeSync(2, '\n' + PREFIX + describe(err).replace(/\s*\n\s*/g, ' ').slice(0, 400) + '\n');
  drain();
  process.exit(1);
}

// The candidate gets the end of its input and this program waits for its output to end:
// so the candidate has exited on its own before this program does (the host then stops
// whatever is left of it, which would otherwise read as its crash). A candidate that
// goes on is ended by its time limit.
function drain() {
  try {
    fs.closeSync(1);
    channel.discard();
  } catch (e) {
    // the channel is gone either way
  }
}

process.on('uncaughtException', fail);

// everything the tests print goes to stderr; fd 1 is the channel's
const quiet = new console.Console({ stdout: process.stderr, stderr: process.stderr });
quiet.assert = (ok, ...message) => {
  if (ok) return;
  const err = new Error('Assertion failed' + (message.length ? ': ' + message.join(' ') : ''));
  err.vibesAssert = true;
  state.failed = state.failed || err;
  throw err;
};
globalThis.console = quiet;
Object.defineProperty(process, 'stdout', { value: process.stderr, configurable: true });

function broken(why) {
  state.broken = state.broken || why;
  return new CandidateError("the candidate's answer could not be read: " + state.broken);
}

function receive() {
  const [kind, json] = channel.receive();
  if (kind === 'ret') return { value: wire.decode(wire.parse(json)) };
  if (kind !== 'raise') throw new wire.WireError('an unknown frame');
  const what = wire.parse(json);
  if (typeof what !== 'string') throw new wire.WireError('a malformed raise');
  return { raised: what.length > 300 ? what.slice(0, 297) + '...' : what };
}

// A candidate that already ended cannot take the call, but what it wrote before is still
// read (then the end of input): the same verdict whichever came first.
function sendCall(json) {
  try {
    channel.send('call', json);
  } catch (e) {
    if (e.code !== 'EPIPE') throw e;
  }
}

// The stub's body: the arguments to the candidate, its answer back as plain data.
function call(args) {
  if (state.broken) throw broken(state.broken);
  // the tests' own arguments: one the wire cannot carry is the test program's failure
  const json = JSON.stringify(wire.encode(Array.from(args)));
  let frame;
  try {
    sendCall(json);
    frame = receive();
  } catch (e) {
    throw broken(e instanceof wire.WireError ? e.message : String(e && e.message));
  }
  if ('raised' in frame) throw new CandidateError('the candidate raised: ' + frame.raised);
  return frame.value;
}

function done() {
  if (state.broken) fail(new CandidateError("the candidate's answer could not be read: " + state.broken));
  if (state.failed) fail(state.failed);
  if (typeof DONE !== 'string') fail(new Error('the test program was started without its done marker'));
  fs.writeSync(2, '\n' + DONE + '\n');
}

module.exports = (marker) => {
  DONE = marker;
  return { call, done };
};
