// The candidate's server (docs/integrity.md): main.js is `prepare()`, the prompt and the
// completion, then `serve(entry point)`, which answers the test program's calls until
// its input ends. This side is the sample's: nothing here is trusted, it only has to be
// right for honest code.
'use strict';

const wire = require('./vibes_wire.js');

// The sample's prints go to stderr: fd 1 is the channel's.
function prepare() {
  globalThis.console = new console.Console({ stdout: process.stderr, stderr: process.stderr });
  Object.defineProperty(process, 'stdout', { value: process.stderr, configurable: true });
}

function describe(err) {
  try {
    if (err instanceof Error) return err.name + ': ' + err.message;
    return 'threw ' + String(err);
  } catch (e) {
    return 'threw a value that cannot be shown';
  }
}

function answer(fn, name, json) {
  try {
    const args = wire.decode(wire.parse(json));
    if (typeof fn !== 'function') throw new ReferenceError(name + ' is not defined');
    return ['ret', JSON.stringify(wire.encode(fn.apply(undefined, args)))];
  } catch (e) {
    return ['raise', JSON.stringify(describe(e))];
  }
}

function serve(fn, name) {
  const channel = new wire.Channel(0, 1);
  for (;;) {
    let frame;
    try {
      frame = channel.receive();
    } catch (e) {
      process.exit(0); // the tests ended: so does this program, whatever timers it left
    }
    if (frame[0] !== 'call') continue;
    const [kind, json] = answer(fn, name, frame[1]);
    // a newline first: a print of the sample's without one must not swallow the frame
    channel.send(kind, json, '\n');
  }
}

module.exports = { prepare, serve };
