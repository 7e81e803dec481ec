"""Values between the trusted checker and a sample's process: data only, never code.

Runs inside the sandbox (stdlib only). A value is encoded as JSON in which every
container is tagged, so the decoder builds nothing but plain builtin values (and the
few stdlib number types listed below): no object of the sample's making, no pickle, no
``__eq__`` of its choosing, ever reaches the checker. What cannot be expressed as data
(a generator, an instance of a class the sample defined) stays in the sample's process
and travels as a handle.

Tags: ``["l", [...]]`` list, ``["t", ...]`` tuple, ``["s", ...]`` set, ``["fs", ...]``
frozenset, ``["d", [[k, v], ...]]`` dict, ``["i", "hex"]`` an int too long for JSON's
comfort, ``["x", "nan"|"inf"|"-inf"]`` float specials, ``["b", "hex"]`` bytes, ``["ba",
"hex"]`` bytearray, ``["c", re, im]`` complex, ``["F", num, den]`` Fraction, ``["D",
"text"]`` Decimal, ``["r", start, stop, step]`` range, ``["e"]`` Ellipsis, ``["T", name]``
a builtin type, ``["h", n]`` a handle. Scalars (None, bool, small int, finite float, str)
are themselves.
"""

import decimal
import fractions
import json
import math
import struct

# Start a script without its folder on sys.path (as unit.NO_SCRIPT_DIR): that folder is
# writable by samples, and nothing they plant there may be imported by a trusted process.
NO_SCRIPT_DIR = (
    "import runpy, sys; del sys.path[0]; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)
# Builtin types travel by name (the receiver's own builtin, never an object of the sender's).
TYPES = {t.__name__: t for t in (int, float, complex, str, bytes, bytearray, bool, list,
                                 tuple, dict, set, frozenset, range, object, type)}  # fmt: skip
MAX_MESSAGE = 64 << 20  # bytes: a larger value is refused (the sample's failure)
MAX_DEPTH = 200
_SMALL = 1 << 53


class WireError(Exception):
    """A message that is not well-formed data: the sending side's failure."""


def _float(x):
    if math.isnan(x):
        return ["x", "nan"]
    if math.isinf(x):
        return ["x", "inf" if x > 0 else "-inf"]
    return x


def _int(x):
    if -_SMALL < x < _SMALL:
        return x
    return ["i", hex(x)]


def encode(value, handles=None, depth=0):
    """``value`` as tagged JSON-ready data. Subclasses of builtin types are encoded by
    their base type's own data (a namedtuple as a tuple, a Counter as a dict), read with
    the base type's methods so an override cannot change what is sent. ``handles``: a
    callable that turns anything else into a handle number; without one, such a value
    is a ``TypeError``.

    Raises: TypeError (not data, no handles), ValueError (too deep or cyclic)."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply to send")
    d = depth + 1
    if value is None or type(value) is bool or type(value) is str:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _int(int.__index__(value))
    if isinstance(value, float):
        return _float(float.__float__(value))
    if isinstance(value, str):
        return str.__str__(value)
    if (type(value) is list or type(value) is tuple) and _flat(value):
        return ["l" if type(value) is list else "t", list(value)]  # as they are: fast
    if isinstance(value, (list, tuple, set, frozenset)):
        base = next(t for t in (list, tuple, set, frozenset) if isinstance(value, t))
        tag = {list: "l", tuple: "t", set: "s", frozenset: "fs"}[base]
        return [tag, [encode(v, handles, d) for v in base.__iter__(value)]]
    if isinstance(value, dict):
        items = dict.items(value)
        return ["d", [[encode(k, handles, d), encode(v, handles, d)] for k, v in items]]
    if isinstance(value, bytes):
        return ["b", bytes(value).hex()]
    if isinstance(value, bytearray):
        return ["ba", bytes(value).hex()]
    if isinstance(value, complex):
        return ["c", _float(value.real), _float(value.imag)]
    if isinstance(value, fractions.Fraction):
        return ["F", _int(int(value.numerator)), _int(int(value.denominator))]
    if isinstance(value, decimal.Decimal):
        return ["D", decimal.Decimal.__str__(value)]
    if isinstance(value, range):
        return ["r", _int(value.start), _int(value.stop), _int(value.step)]
    if value is Ellipsis:
        return ["e"]
    if isinstance(value, type) and TYPES.get(getattr(value, "__name__", None)) is value:
        return ["T", value.__name__]  # MBPP 533 passes `int`, `str` to the function
    converted = _numeric(value)
    if converted is not None:
        return converted
    if handles is None:
        raise TypeError(f"a {type(value).__name__} cannot be sent to the sandboxed code")
    return ["h", handles(value)]


_SCALARS = (str, bool, type(None))


def _flat(items):
    """Whether every item is a scalar JSON carries as itself (long lists of numbers and
    strings then cost no call per item, on either side)."""
    for v in items:
        t = type(v)
        if t is int:
            if not -_SMALL < v < _SMALL:
                return False
        elif t is float:
            if not math.isfinite(v):
                return False
        elif t not in _SCALARS:
            return False
    return True


def _plain(items):
    """Whether a decoded JSON array holds only scalars (each already plain data)."""
    return all(type(v) in _PLAIN for v in items)


_PLAIN = (int, float, str, bool, type(None))


def _numeric(value):
    """Numbers of other libraries (numpy scalars) as the builtin number they stand for,
    like the comparisons a test would make with them."""
    module = type(value).__module__ or ""
    if not module.startswith("numpy"):
        return None
    item = getattr(value, "item", None)
    if item is None or getattr(value, "shape", None) != ():
        return None
    plain = item()
    if type(plain) in (bool, int, float, complex, str, bytes):
        return encode(plain)
    return None


def _decode_int(v):
    if type(v) is int:
        return v
    if type(v) is list and len(v) == 2 and v[0] == "i" and type(v[1]) is str:
        return int(v[1], 16)
    raise WireError("malformed int")


def _decode_float(v):
    if type(v) in (int, float):
        return float(v)
    if type(v) is list and len(v) == 2 and v[0] == "x":
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v[1]]
    raise WireError("malformed float")


def decode(data, handle=None, depth=0):
    """The plain value ``data`` (from ``encode``) stands for. ``handle``: turns a handle
    number into a proxy; without one, a handle is a ``WireError``.

    Raises: WireError for anything that is not well-formed."""
    if depth > MAX_DEPTH + 1:
        raise WireError("value nested too deeply")
    t = type(data)
    if data is None or t in (bool, int, float, str):
        return data
    if t is not list or not data or type(data[0]) is not str:
        raise WireError("malformed value")
    tag, d = data[0], depth + 1
    try:
        if tag in ("l", "t"):
            if type(data[1]) is not list:
                raise WireError("malformed sequence")
            plain = _plain(data[1])
            items = list(data[1]) if plain else [decode(v, handle, d) for v in data[1]]
            return items if tag == "l" else tuple(items)
        if tag in ("s", "fs"):
            return _set([decode(v, handle, d) for v in data[1]], tag)
        if tag == "d":
            return {decode(k, handle, d): decode(v, handle, d) for k, v in data[1]}
        if tag == "i":
            return _decode_int(data)
        if tag == "x":
            return _decode_float(data)
        if tag == "b":
            return bytes.fromhex(data[1])
        if tag == "ba":
            return bytearray.fromhex(data[1])
        if tag == "c":
            return complex(_decode_float(data[1]), _decode_float(data[2]))
        if tag == "F":
            return fractions.Fraction(_decode_int(data[1]), _decode_int(data[2]))
        if tag == "D":
            return decimal.Decimal(str(data[1]))
        if tag == "r":
            return range(_decode_int(data[1]), _decode_int(data[2]), _decode_int(data[3]))
        if tag == "e":
            return Ellipsis
        if tag == "T" and data[1] in TYPES:
            return TYPES[data[1]]
        if tag == "h" and handle is not None and type(data[1]) is int:
            return handle(data[1])
    except WireError:
        raise
    except Exception as exc:  # a wrong arity, an unhashable key, a bad hex string...
        raise WireError(f"malformed {tag!r} value: {type(exc).__name__}") from None
    raise WireError(f"unknown tag {tag!r}")


def _set(items, tag):
    """A set built one item at a time (as the dict above): keys chosen to collide cost
    the decoder quadratic time, which the harness's timer can then interrupt."""
    out = set()
    for item in items:
        out.add(item)
    return out if tag == "s" else frozenset(out)


# -- framing: a 4-byte big-endian length, then that many bytes of UTF-8 JSON ---------------


def dumps(message):
    body = json.dumps(message, ensure_ascii=False, allow_nan=False).encode("utf-8")
    if len(body) > MAX_MESSAGE:
        raise ValueError("message too large to send")
    return struct.pack(">I", len(body)) + body


def _read_exact(sock, n):
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv(sock):
    """One message from a blocking socket.

    Raises: EOFError when the peer is gone, WireError for a malformed message."""
    (size,) = struct.unpack(">I", _read_exact(sock, 4))
    if size > MAX_MESSAGE:
        raise WireError("message too large")
    try:
        return json.loads(_read_exact(sock, size).decode("utf-8"))
    except (ValueError, RecursionError):
        raise WireError("message is not JSON") from None


def send(sock, message):
    sock.sendall(dumps(message))
