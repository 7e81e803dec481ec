//! The wire between a trusted HumanEval-Rust test program and the candidate it calls
//! (docs/integrity.md, "The split"). One frame per line, each starting with `\x02V `:
//!
//!     test -> candidate:   call <function> <json array of arguments>
//!     candidate -> test:   ret <json value>  |  raise <json string>
//!
//! Values are JSON decoded by the receiver's declared type (`Dec`). This file is compiled
//! into both programs, but only the test side's reading decides a verdict, and it treats
//! every byte it reads as hostile: a malformed, oversized or mistyped answer, or EOF,
//! panics inside the calling test (which then fails). Nothing here ever exits with 0
//! except `run_tests`, after every test returned.
#![allow(dead_code, unused_imports, clippy::all)]

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::io::{BufRead, Write};
use std::sync::Mutex;

pub const MARK: &[u8] = b"\x02V ";
pub const MAX_FRAME: usize = 64 << 20;
const MAX_DEPTH: usize = 200; // deeper nesting is refused, not recursed into
pub const DONE: &str = "\x02T done";
pub const ENDED: &str = "the candidate ended without answering";
const KEEP_MESSAGE: usize = 4000; // characters of a panic message the test run prints

pub type Res<T> = Result<T, String>;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Num(String), // the number's JSON text: each side parses it as its declared type
    Str(String),
    Arr(Vec<Value>),
    Obj(Vec<(String, Value)>),
}

// -- JSON text ------------------------------------------------------------------------

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

/// One JSON value, the whole of ``text``.
pub fn parse(text: &str) -> Res<Value> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text after the value at byte {}", p.i));
    }
    Ok(v)
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Res<()> {
        self.ws();
        if self.peek() != Some(c) {
            return Err(format!("expected '{}' at byte {}", c as char, self.i));
        }
        self.i += 1;
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Res<Value> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        self.ws();
        match self.peek() {
            Some(b'n') => self.word("null", Value::Null),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'[') => self.array(depth),
            Some(b'{') => self.object(depth),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(format!("unexpected input at byte {}", self.i)),
        }
    }

    fn word(&mut self, w: &str, v: Value) -> Res<Value> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(format!("unexpected input at byte {}", self.i))
        }
    }

    fn array(&mut self, depth: usize) -> Res<Value> {
        self.i += 1;
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Arr(out));
        }
        loop {
            out.push(self.value(depth + 1)?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Arr(out));
                }
                _ => return Err(format!("expected ',' or ']' at byte {}", self.i)),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Res<Value> {
        self.i += 1;
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Obj(out));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(format!("expected a key at byte {}", self.i));
            }
            let key = self.string()?;
            self.eat(b':')?;
            out.push((key, self.value(depth + 1)?));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Obj(out));
                }
                _ => return Err(format!("expected ',' or '}}' at byte {}", self.i)),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    /// JSON's number grammar, kept as text.
    fn number(&mut self) -> Res<Value> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let lead = self.peek();
        let n = self.digits();
        if n == 0 || (lead == Some(b'0') && n > 1) {
            return Err(format!("malformed number at byte {start}"));
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(format!("malformed number at byte {start}"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(format!("malformed number at byte {start}"));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
        Ok(Value::Num(text.to_string()))
    }

    fn hex4(&mut self) -> Res<u32> {
        let digits = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|_| "bad \\u escape")?;
        let n = u32::from_str_radix(text, 16).map_err(|_| "bad \\u escape")?;
        self.i += 4;
        Ok(n)
    }

    fn string(&mut self) -> Res<String> {
        self.i += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            let c = self.peek().ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|_| "invalid UTF-8".to_string()),
                b'\\' => {
                    let e = self.peek().ok_or("unterminated string")?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode()?,
                        _ => return Err(format!("bad escape at byte {}", self.i)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return Err(format!("raw control character at byte {}", self.i)),
                _ => out.push(c),
            }
        }
    }

    fn unicode(&mut self) -> Res<char> {
        let hi = self.hex4()?;
        if (0xd800..0xdc00).contains(&hi) {
            if !self.s[self.i..].starts_with(b"\\u") {
                return Err("lone surrogate".into());
            }
            self.i += 2;
            let lo = self.hex4()?;
            if !(0xdc00..0xe000).contains(&lo) {
                return Err("lone surrogate".into());
            }
            let code = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
            return char::from_u32(code).ok_or_else(|| "bad code point".into());
        }
        char::from_u32(hi).ok_or_else(|| "lone surrogate".into())
    }
}

/// ``v`` as JSON text (one line: control characters escaped).
pub fn write(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Num(t) => out.push_str(t),
        Value::Str(s) => write_str(s, out),
        Value::Arr(xs) => {
            out.push('[');
            for (n, x) in xs.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        Value::Obj(kv) => {
            out.push('{');
            for (n, (k, x)) in kv.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_str(k, out);
                out.push(':');
                write(x, out);
            }
            out.push('}');
        }
    }
}

pub fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

pub fn json(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn show(v: &Value) -> String {
    let mut text = json(v);
    if text.len() > 80 {
        let mut cut = 80;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

fn expected(what: &str, v: &Value) -> String {
    format!("expected {what}, got {}", show(v))
}

// -- values by type ---------------------------------------------------------------------

pub trait Enc {
    fn enc(&self) -> Value;
}

pub trait Dec: Sized {
    fn dec(v: &Value) -> Res<Self>;
}

macro_rules! ints {
    ($($t:ty),*) => { $(
        impl Enc for $t {
            fn enc(&self) -> Value { Value::Num(self.to_string()) }
        }
        impl Dec for $t {
            fn dec(v: &Value) -> Res<Self> {
                match v {
                    Value::Num(t) => t.parse::<$t>().map_err(|_| expected(stringify!($t), v)),
                    _ => Err(expected(stringify!($t), v)),
                }
            }
        }
    )* };
}
ints!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

macro_rules! floats {
    ($($t:ty),*) => { $(
        impl Enc for $t {
            fn enc(&self) -> Value {
                if self.is_nan() {
                    Value::Str("NaN".into())
                } else if self.is_infinite() {
                    Value::Str(if *self > 0.0 { "Infinity" } else { "-Infinity" }.into())
                } else {
                    Value::Num(format!("{:?}", self)) // the shortest text that reads back exactly
                }
            }
        }
        impl Dec for $t {
            fn dec(v: &Value) -> Res<Self> {
                match v {
                    Value::Num(t) => t.parse::<$t>().map_err(|_| expected(stringify!($t), v)),
                    Value::Str(s) if s == "NaN" => Ok(<$t>::NAN),
                    Value::Str(s) if s == "Infinity" => Ok(<$t>::INFINITY),
                    Value::Str(s) if s == "-Infinity" => Ok(<$t>::NEG_INFINITY),
                    _ => Err(expected(stringify!($t), v)),
                }
            }
        }
    )* };
}
floats!(f32, f64);

impl Enc for bool {
    fn enc(&self) -> Value {
        Value::Bool(*self)
    }
}
impl Dec for bool {
    fn dec(v: &Value) -> Res<Self> {
        match v {
            Value::Bool(b) => Ok(*b),
            _ => Err(expected("bool", v)),
        }
    }
}

impl Enc for char {
    fn enc(&self) -> Value {
        Value::Str(self.to_string())
    }
}
impl Dec for char {
    fn dec(v: &Value) -> Res<Self> {
        if let Value::Str(s) = v {
            let mut cs = s.chars();
            if let (Some(c), None) = (cs.next(), cs.next()) {
                return Ok(c);
            }
        }
        Err(expected("char", v))
    }
}

impl Enc for str {
    fn enc(&self) -> Value {
        Value::Str(self.to_string())
    }
}
impl Enc for String {
    fn enc(&self) -> Value {
        Value::Str(self.clone())
    }
}
impl Dec for String {
    fn dec(v: &Value) -> Res<Self> {
        match v {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(expected("String", v)),
        }
    }
}
// Borrowed parameters and results are decoded as owned values that live as long as the
// process (a call's data: at most one frame's worth per call).
impl Dec for &'static str {
    fn dec(v: &Value) -> Res<Self> {
        Ok(Box::leak(String::dec(v)?.into_boxed_str()))
    }
}
impl<T: Dec> Dec for &'static T {
    fn dec(v: &Value) -> Res<Self> {
        Ok(Box::leak(Box::new(T::dec(v)?)))
    }
}
impl<T: Dec> Dec for &'static [T] {
    fn dec(v: &Value) -> Res<Self> {
        Ok(Box::leak(Vec::<T>::dec(v)?.into_boxed_slice()))
    }
}

impl Enc for () {
    fn enc(&self) -> Value {
        Value::Null
    }
}
impl Dec for () {
    fn dec(v: &Value) -> Res<Self> {
        match v {
            Value::Null => Ok(()),
            _ => Err(expected("()", v)),
        }
    }
}

impl<T: Enc + ?Sized> Enc for &T {
    fn enc(&self) -> Value {
        (**self).enc()
    }
}
impl<T: Enc + ?Sized> Enc for &mut T {
    fn enc(&self) -> Value {
        (**self).enc()
    }
}
impl<T: Enc + ?Sized> Enc for Box<T> {
    fn enc(&self) -> Value {
        (**self).enc()
    }
}
impl<T: Dec> Dec for Box<T> {
    fn dec(v: &Value) -> Res<Self> {
        Ok(Box::new(T::dec(v)?))
    }
}

fn array(v: &Value) -> Res<&[Value]> {
    match v {
        Value::Arr(xs) => Ok(xs),
        _ => Err(expected("an array", v)),
    }
}

fn items<T: Dec>(v: &Value) -> Res<Vec<T>> {
    array(v)?.iter().map(T::dec).collect()
}

impl<T: Enc> Enc for [T] {
    fn enc(&self) -> Value {
        Value::Arr(self.iter().map(Enc::enc).collect())
    }
}
impl<T: Enc, const N: usize> Enc for [T; N] {
    fn enc(&self) -> Value {
        self[..].enc()
    }
}
impl<T: Dec, const N: usize> Dec for [T; N] {
    fn dec(v: &Value) -> Res<Self> {
        items::<T>(v)?.try_into().map_err(|_| expected(&format!("{N} items"), v))
    }
}
impl<T: Enc> Enc for Vec<T> {
    fn enc(&self) -> Value {
        self[..].enc()
    }
}
impl<T: Dec> Dec for Vec<T> {
    fn dec(v: &Value) -> Res<Self> {
        items(v)
    }
}
impl<T: Enc> Enc for VecDeque<T> {
    fn enc(&self) -> Value {
        Value::Arr(self.iter().map(Enc::enc).collect())
    }
}
impl<T: Dec> Dec for VecDeque<T> {
    fn dec(v: &Value) -> Res<Self> {
        Ok(items(v)?.into())
    }
}

// `Some(x)` is `[x]` and `None` is `null`, so that `Option<Option<T>>` stays unambiguous.
impl<T: Enc> Enc for Option<T> {
    fn enc(&self) -> Value {
        match self {
            None => Value::Null,
            Some(x) => Value::Arr(vec![x.enc()]),
        }
    }
}
impl<T: Dec> Dec for Option<T> {
    fn dec(v: &Value) -> Res<Self> {
        match v {
            Value::Null => Ok(None),
            Value::Arr(xs) if xs.len() == 1 => Ok(Some(T::dec(&xs[0])?)),
            _ => Err(expected("null or [value]", v)),
        }
    }
}

macro_rules! tuples {
    ($(($($n:tt $t:ident),+))*) => { $(
        impl<$($t: Enc),+> Enc for ($($t,)+) {
            fn enc(&self) -> Value { Value::Arr(vec![$(self.$n.enc()),+]) }
        }
        impl<$($t: Dec),+> Dec for ($($t,)+) {
            fn dec(v: &Value) -> Res<Self> {
                let xs = array(v)?;
                if xs.len() != [$($n),+].len() {
                    return Err(expected("a tuple of its length", v));
                }
                Ok(($($t::dec(&xs[$n])?,)+))
            }
        }
    )* };
}
tuples! {
    (0 A)
    (0 A, 1 B)
    (0 A, 1 B, 2 C)
    (0 A, 1 B, 2 C, 3 D)
    (0 A, 1 B, 2 C, 3 D, 4 E)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F)
}

// Maps are arrays of [key, value] pairs (keys need not be strings); a repeated key is
// refused rather than silently dropped.
fn pairs<K: Dec, V: Dec>(v: &Value) -> Res<Vec<(K, V)>> {
    array(v)?.iter().map(<(K, V)>::dec).collect()
}

impl<K: Enc, V: Enc, S> Enc for HashMap<K, V, S> {
    fn enc(&self) -> Value {
        Value::Arr(self.iter().map(|(k, v)| Value::Arr(vec![k.enc(), v.enc()])).collect())
    }
}
impl<K: Dec + Eq + Hash, V: Dec, S: BuildHasher + Default> Dec for HashMap<K, V, S> {
    fn dec(v: &Value) -> Res<Self> {
        let kv = pairs::<K, V>(v)?;
        let n = kv.len();
        let map: Self = kv.into_iter().collect();
        if map.len() != n {
            return Err("a map with a repeated key".into());
        }
        Ok(map)
    }
}
impl<K: Enc, V: Enc> Enc for BTreeMap<K, V> {
    fn enc(&self) -> Value {
        Value::Arr(self.iter().map(|(k, v)| Value::Arr(vec![k.enc(), v.enc()])).collect())
    }
}
impl<K: Dec + Ord, V: Dec> Dec for BTreeMap<K, V> {
    fn dec(v: &Value) -> Res<Self> {
        let kv = pairs::<K, V>(v)?;
        let n = kv.len();
        let map: Self = kv.into_iter().collect();
        if map.len() != n {
            return Err("a map with a repeated key".into());
        }
        Ok(map)
    }
}
impl<T: Enc, S> Enc for HashSet<T, S> {
    fn enc(&self) -> Value {
        Value::Arr(self.iter().map(Enc::enc).collect())
    }
}
impl<T: Dec + Eq + Hash, S: BuildHasher + Default> Dec for HashSet<T, S> {
    fn dec(v: &Value) -> Res<Self> {
        let xs = items::<T>(v)?;
        let n = xs.len();
        let set: Self = xs.into_iter().collect();
        if set.len() != n {
            return Err("a set with a repeated item".into());
        }
        Ok(set)
    }
}
impl<T: Enc> Enc for BTreeSet<T> {
    fn enc(&self) -> Value {
        Value::Arr(self.iter().map(Enc::enc).collect())
    }
}
impl<T: Dec + Ord> Dec for BTreeSet<T> {
    fn dec(v: &Value) -> Res<Self> {
        let xs = items::<T>(v)?;
        let n = xs.len();
        let set: Self = xs.into_iter().collect();
        if set.len() != n {
            return Err("a set with a repeated item".into());
        }
        Ok(set)
    }
}

// -- dynamic values (`Box<dyn Any>`, `&dyn Any`): {"$t": "<type>", "v": <value>} ------------

/// The types a dynamic value may hold on the wire, by the name its tag spells.
macro_rules! any_types {
    ($m:ident) => {
        $m! {
            i8 => "i8", i16 => "i16", i32 => "i32", i64 => "i64", i128 => "i128",
            isize => "isize", u8 => "u8", u16 => "u16", u32 => "u32", u64 => "u64",
            u128 => "u128", usize => "usize", f32 => "f32", f64 => "f64", bool => "bool",
            char => "char", String => "String", &'static str => "&str", () => "()",
            Vec<i32> => "Vec<i32>", Vec<i64> => "Vec<i64>", Vec<f64> => "Vec<f64>",
            Vec<String> => "Vec<String>", Vec<Box<dyn Any>> => "Vec<Box<dyn Any>>",
            Box<dyn Any> => "Box<dyn Any>"
        }
    };
}

pub fn tagged(tag: &str, v: Value) -> Value {
    Value::Obj(vec![("$t".into(), Value::Str(tag.into())), ("v".into(), v)])
}

/// (tag, value) of a tagged value.
pub fn untag(v: &Value) -> Res<(&str, &Value)> {
    if let Value::Obj(kv) = v {
        if let [(t, Value::Str(tag)), (k, inner)] = &kv[..] {
            if t == "$t" && k == "v" {
                return Ok((tag, inner));
            }
        }
    }
    Err(expected("a tagged value", v))
}

impl Enc for dyn Any {
    fn enc(&self) -> Value {
        macro_rules! try_each {
            ($($t:ty => $name:expr),*) => {
                $(if let Some(x) = self.downcast_ref::<$t>() {
                    return tagged($name, x.enc());
                })*
            };
        }
        any_types!(try_each);
        panic!("a dynamic value of a type the wire does not carry")
    }
}
impl Dec for Box<dyn Any> {
    fn dec(v: &Value) -> Res<Self> {
        let (tag, inner) = untag(v)?;
        macro_rules! try_each {
            ($($t:ty => $name:expr),*) => {
                $(if tag == $name {
                    return Ok(Box::new(<$t as Dec>::dec(inner)?));
                })*
            };
        }
        any_types!(try_each);
        Err(format!("a dynamic value of unknown type {tag:?}"))
    }
}
impl Dec for &'static dyn Any {
    fn dec(v: &Value) -> Res<Self> {
        Ok(Box::leak(<Box<dyn Any>>::dec(v)?))
    }
}

/// A variant of a task's own enum (HumanEval-X Rust/137's `RtnType`): its name and fields.
pub fn variant(name: &str, fields: Vec<Value>) -> Value {
    tagged(name, Value::Arr(fields))
}

/// (variant name, fields) of ``v``, which must have ``n`` fields when named ``name``.
pub fn fields<'v>(v: &'v Value) -> Res<(&'v str, &'v [Value])> {
    let (tag, inner) = untag(v)?;
    Ok((tag, array(inner)?))
}

pub fn arity(xs: &[Value], n: usize) -> Res<()> {
    if xs.len() == n {
        Ok(())
    } else {
        Err(format!("expected {n} values, got {}", xs.len()))
    }
}

// -- frames ---------------------------------------------------------------------------

/// The next frame on ``input`` (without its marker), skipping every line that does not
/// start with the marker without keeping it; None at EOF.
pub fn read_frame(input: &mut impl BufRead) -> Res<Option<String>> {
    loop {
        match read_line(input)? {
            Line::Eof => return Ok(None),
            Line::Other => continue,
            Line::Frame(bytes) => {
                return String::from_utf8(bytes).map(Some).map_err(|_| "a frame that is not UTF-8".into())
            }
        }
    }
}

enum Line {
    Eof,
    Other,
    Frame(Vec<u8>),
}

/// One line: a frame's bytes after the marker (at most ``MAX_FRAME``), or `Other` for a
/// line that does not start with the marker (dropped as it is read, however long).
fn read_line(input: &mut impl BufRead) -> Res<Line> {
    let mut line: Vec<u8> = Vec::new();
    let mut frame: Option<bool> = None; // undecided until the marker's length is read
    let mut any = false;
    loop {
        let buf = input.fill_buf().map_err(|e| e.to_string())?;
        if buf.is_empty() {
            return Ok(if any { finish(line, frame) } else { Line::Eof });
        }
        any = true;
        let newline = buf.iter().position(|&b| b == b'\n');
        if frame != Some(false) {
            line.extend_from_slice(&buf[..newline.unwrap_or(buf.len())]);
            if frame.is_none() && line.len() >= MARK.len() {
                frame = Some(line.starts_with(MARK));
            }
            if frame == Some(false) {
                line = Vec::new();
            } else if line.len() > MAX_FRAME + MARK.len() {
                return Err(format!("a frame over {MAX_FRAME} bytes"));
            }
        }
        let used = newline.map_or(buf.len(), |n| n + 1);
        input.consume(used);
        if newline.is_some() {
            return Ok(finish(line, frame));
        }
    }
}

fn finish(line: Vec<u8>, frame: Option<bool>) -> Line {
    if frame == Some(true) {
        Line::Frame(line[MARK.len()..].to_vec())
    } else {
        Line::Other
    }
}

/// Write one frame to ``out``.
fn send(out: &mut impl Write, line: &str) -> Res<()> {
    // A newline first: whatever the other side printed without one stays on its own line.
    let mut text = Vec::with_capacity(line.len() + 8);
    text.push(b'\n');
    text.extend_from_slice(MARK);
    text.extend_from_slice(line.as_bytes());
    text.push(b'\n');
    out.write_all(&text).and_then(|_| out.flush()).map_err(|e| e.to_string())
}

// -- the test side: stubs and the test run ------------------------------------------------

static CHANNEL: Mutex<()> = Mutex::new(());

enum Failure {
    Raised(String),
    Ended,
    Bad(String),
}

/// What a stub does: send the call, wait for the answer, decode it as ``R``; any failure
/// panics in the calling test.
pub fn call<R: Dec>(name: &str, args: Vec<Value>) -> R {
    let _one_at_a_time = CHANNEL.lock().unwrap_or_else(|e| e.into_inner());
    match exchange(name, args) {
        Ok(r) => r,
        Err(Failure::Raised(m)) => panic!("the candidate panicked: {m}"),
        Err(Failure::Ended) => panic!("{ENDED}"),
        Err(Failure::Bad(m)) => panic!("a malformed answer from the candidate: {m}"),
    }
}

fn exchange<R: Dec>(name: &str, args: Vec<Value>) -> Result<R, Failure> {
    let mut line = format!("call {name} ");
    write(&Value::Arr(args), &mut line);
    send(&mut std::io::stdout().lock(), &line).map_err(|_| Failure::Ended)?;
    let stdin = std::io::stdin();
    let frame = match read_frame(&mut stdin.lock()) {
        Ok(Some(f)) => f,
        Ok(None) => return Err(Failure::Ended),
        Err(e) => return Err(Failure::Bad(e)),
    };
    if let Some(rest) = frame.strip_prefix("ret ") {
        let v = parse(rest).map_err(Failure::Bad)?;
        return R::dec(&v).map_err(Failure::Bad);
    }
    if let Some(rest) = frame.strip_prefix("raise ") {
        return match parse(rest) {
            Ok(Value::Str(m)) => Err(Failure::Raised(m)),
            _ => Err(Failure::Bad("a raise without a message".into())),
        };
    }
    Err(Failure::Bad("an unknown frame".into()))
}

static PANIC: Mutex<Option<String>> = Mutex::new(None);

fn payload_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}

fn clip(mut s: String) -> String {
    if s.len() > KEEP_MESSAGE {
        let mut cut = KEEP_MESSAGE;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// Run ``tests`` one after another, each result on stderr (`\x02T ok <name>` or
/// `\x02T failed <name> <json message>`), the done marker last only when every one
/// returned; exit 0 then, else 1.
pub fn run_tests(tests: &[(&str, fn())]) -> ! {
    std::panic::set_hook(Box::new(|info| {
        let mut first = PANIC.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(clip(payload_text(info.payload())));
        }
    }));
    let mut failed = 0;
    for (name, test) in tests {
        *PANIC.lock().unwrap_or_else(|e| e.into_inner()) = None;
        eprintln!("\x02T start {name}");
        if std::panic::catch_unwind(*test).is_ok() {
            eprintln!("\x02T ok {name}");
        } else {
            failed += 1;
            let message = PANIC.lock().unwrap_or_else(|e| e.into_inner()).take();
            let mut text = String::new();
            write_str(&message.unwrap_or_else(|| "panicked".into()), &mut text);
            eprintln!("\x02T failed {name} {text}");
        }
    }
    if failed == 0 {
        eprintln!("{DONE}");
        std::process::exit(0);
    }
    std::process::exit(1)
}

// -- the candidate side: the server -------------------------------------------------------

/// The channel to the test program: stdout as the candidate started, moved to a descriptor
/// of its own, with fd 1 then pointing at stderr: whatever the candidate prints ends up in
/// its stderr (kept with its result), never among the frames.
fn channel() -> std::fs::File {
    use std::os::fd::FromRawFd;
    extern "C" {
        fn dup(fd: i32) -> i32;
        fn dup2(from: i32, to: i32) -> i32;
        fn signal(signum: i32, handler: usize) -> usize;
    }
    // SAFETY: fd 1 is open (the wiring gives every command a stdout); `dup` returns a new
    // descriptor that nothing else owns, handed to the File. SIGPIPE ignored (SIG_IGN),
    // as Rust's own runtime does, which a candidate crate (no Rust main) does not run.
    unsafe {
        signal(13, 1);
        let saved = dup(1);
        if saved < 0 || dup2(2, 1) < 0 {
            eprintln!("vibes: cannot move the channel off stdout");
            std::process::exit(3);
        }
        std::fs::File::from_raw_fd(saved)
    }
}

/// Answer calls until EOF: each `call <name> <args>` goes to ``dispatch``; its value is sent
/// as `ret`, its error or panic as `raise`.
pub fn serve(dispatch: &dyn Fn(&str, &[Value]) -> Res<Value>) {
    let mut out = channel();
    let stdin = std::io::stdin();
    loop {
        let frame = match read_frame(&mut stdin.lock()) {
            Ok(Some(f)) => f,
            Ok(None) => return,
            Err(e) => {
                let _ = raise(&mut out, &e);
                continue;
            }
        };
        let answer = answer(&frame, dispatch);
        let sent = match answer {
            Ok(v) => send(&mut out, &format!("ret {}", json(&v))),
            Err(m) => raise(&mut out, &m),
        };
        if sent.is_err() {
            return;
        }
    }
}

fn raise(out: &mut impl Write, message: &str) -> Res<()> {
    let mut line = String::from("raise ");
    write_str(message, &mut line);
    send(out, &line)
}

fn answer(frame: &str, dispatch: &dyn Fn(&str, &[Value]) -> Res<Value>) -> Res<Value> {
    let rest = frame.strip_prefix("call ").ok_or("not a call")?;
    let (name, args) = rest.split_once(' ').ok_or("a call without arguments")?;
    let args = match parse(args)? {
        Value::Arr(xs) => xs,
        _ => return Err("arguments that are not an array".into()),
    };
    let run = std::panic::AssertUnwindSafe(|| dispatch(name, &args));
    match std::panic::catch_unwind(run) {
        Ok(result) => result,
        Err(p) => Err(payload_text(&*p)),
    }
}
