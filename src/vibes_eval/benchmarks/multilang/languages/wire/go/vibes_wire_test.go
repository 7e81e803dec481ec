package main

// The wire between a trusted test program and the candidate it calls (docs/integrity.md):
// one frame per line, "\x02V <kind> <json>", values encoded by the sender's declared
// type and decoded by the receiver's. This file is compiled into both programs; every
// name starts with "vibes" so that it cannot meet a prompt's or a completion's.
//
// The receiving side treats what it reads as hostile: a frame over vibesMaxFrame bytes,
// malformed JSON, a value that does not fit the declared type, or nesting deeper than
// encoding/json's limit are errors, never a value.

import (
	vibesBufio "bufio"
	vibesBytes "bytes"
	vibesBase64 "encoding/base64"
	vibesJSON "encoding/json"
	vibesErrors "errors"
	vibesFmt "fmt"
	vibesIO "io"
	vibesMath "math"
	vibesReflect "reflect"
	vibesStrconv "strconv"
	vibesStrings "strings"
	vibesUTF8 "unicode/utf8"
)

const (
	vibesMarker   = "\x02V "
	vibesMaxFrame = 64 << 20 // bytes of one frame's JSON
	vibesMaxDepth = 10000    // nesting of a value (encoding/json refuses deeper JSON too)
	vibesMaxType  = 1024     // characters of a dynamic value's type name
	vibesMaxArray = 1 << 24  // length of an array type named by a dynamic value
)

var vibesEmptyInterface = vibesReflect.TypeOf((*interface{})(nil)).Elem()

var vibesBasic = map[string]vibesReflect.Type{
	"bool": vibesReflect.TypeOf(false), "string": vibesReflect.TypeOf(""),
	"int": vibesReflect.TypeOf(int(0)), "int8": vibesReflect.TypeOf(int8(0)),
	"int16": vibesReflect.TypeOf(int16(0)), "int32": vibesReflect.TypeOf(int32(0)),
	"int64": vibesReflect.TypeOf(int64(0)), "uint": vibesReflect.TypeOf(uint(0)),
	"uint8": vibesReflect.TypeOf(uint8(0)), "uint16": vibesReflect.TypeOf(uint16(0)),
	"uint32": vibesReflect.TypeOf(uint32(0)), "uint64": vibesReflect.TypeOf(uint64(0)),
	"uintptr": vibesReflect.TypeOf(uintptr(0)), "float32": vibesReflect.TypeOf(float32(0)),
	"float64": vibesReflect.TypeOf(float64(0)),
}

// -- frames ---------------------------------------------------------------------------

// vibesReadFrame returns the next frame's kind and JSON payload. Lines that do not start
// with the marker are stray output and are skipped without being kept.
func vibesReadFrame(r *vibesBufio.Reader) (string, []byte, error) {
	for {
		line, isFrame, err := vibesReadLine(r)
		if err != nil {
			return "", nil, err
		}
		if !isFrame {
			continue
		}
		kind, payload, ok := vibesBytes.Cut(line, []byte(" "))
		if !ok {
			return "", nil, vibesErrors.New("a frame without a value")
		}
		return string(kind), payload, nil
	}
}

// vibesReadLine reads one line: (what follows the marker, whether it is a frame, error).
func vibesReadLine(r *vibesBufio.Reader) ([]byte, bool, error) {
	var buf []byte
	started, isFrame := false, false
	for {
		chunk, err := r.ReadSlice('\n')
		if !started && len(chunk) > 0 {
			// the marker may straddle two reads only on a tiny buffer; ours holds 64 KiB
			isFrame = vibesBytes.HasPrefix(chunk, []byte(vibesMarker))
			started = true
		}
		if isFrame {
			if len(buf)+len(chunk) > vibesMaxFrame+len(vibesMarker)+16 {
				return nil, false, vibesErrors.New("a frame over 64 MiB")
			}
			buf = append(buf, chunk...)
		}
		switch {
		case err == nil:
			if isFrame {
				return vibesBytes.TrimSuffix(buf[len(vibesMarker):], []byte("\n")), true, nil
			}
			return nil, false, nil
		case vibesErrors.Is(err, vibesBufio.ErrBufferFull):
			continue
		case vibesErrors.Is(err, vibesIO.EOF):
			return nil, false, vibesIO.EOF // a frame cut short is no frame
		default:
			return nil, false, err
		}
	}
}

// vibesWriteFrame writes one frame in a single write, after a newline that ends whatever
// stray output came before it.
func vibesWriteFrame(w vibesIO.Writer, kind string, value interface{}) error {
	var body vibesBytes.Buffer
	enc := vibesJSON.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return err
	}
	frame := append([]byte("\n"+vibesMarker+kind+" "), body.Bytes()...)
	_, err := w.Write(frame)
	return err
}

// vibesParse reads a payload into a tree of JSON values (numbers kept as text).
func vibesParse(payload []byte) (interface{}, error) {
	if len(payload) > vibesMaxFrame {
		return nil, vibesErrors.New("a frame over 64 MiB")
	}
	dec := vibesJSON.NewDecoder(vibesBytes.NewReader(payload))
	dec.UseNumber()
	var tree interface{}
	if err := dec.Decode(&tree); err != nil {
		return nil, vibesFmt.Errorf("malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != vibesIO.EOF {
		return nil, vibesErrors.New("malformed JSON: data after the value")
	}
	return tree, nil
}

// -- encoding -------------------------------------------------------------------------

// vibesEncode turns v, of declared type t, into a tree of JSON values.
func vibesEncode(v vibesReflect.Value, t vibesReflect.Type, depth int) (interface{}, error) {
	if depth > vibesMaxDepth {
		return nil, vibesErrors.New("a value nested too deeply")
	}
	switch t.Kind() {
	case vibesReflect.Bool:
		return v.Bool(), nil
	case vibesReflect.Int, vibesReflect.Int8, vibesReflect.Int16, vibesReflect.Int32, vibesReflect.Int64:
		return vibesJSON.Number(vibesStrconv.FormatInt(v.Int(), 10)), nil
	case vibesReflect.Uint, vibesReflect.Uint8, vibesReflect.Uint16, vibesReflect.Uint32, vibesReflect.Uint64,
		vibesReflect.Uintptr:
		return vibesJSON.Number(vibesStrconv.FormatUint(v.Uint(), 10)), nil
	case vibesReflect.Float32, vibesReflect.Float64:
		return vibesEncodeFloat(v.Float(), t.Bits()), nil
	case vibesReflect.String:
		s := v.String()
		if vibesUTF8.ValidString(s) {
			return s, nil
		}
		return map[string]interface{}{"$bytes": vibesBase64.StdEncoding.EncodeToString([]byte(s))}, nil
	case vibesReflect.Slice, vibesReflect.Array:
		if t.Kind() == vibesReflect.Slice && v.IsNil() {
			return nil, nil
		}
		out := make([]interface{}, v.Len())
		for i := range out {
			item, err := vibesEncode(v.Index(i), t.Elem(), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = item
		}
		return out, nil
	case vibesReflect.Map:
		return vibesEncodeMap(v, t, depth)
	case vibesReflect.Interface:
		return vibesEncodeDynamic(v, depth)
	}
	return nil, vibesFmt.Errorf("the wire cannot carry a %s", t)
}

func vibesEncodeFloat(f float64, bits int) interface{} {
	switch {
	case vibesMath.IsNaN(f):
		return "NaN"
	case vibesMath.IsInf(f, 1):
		return "Infinity"
	case vibesMath.IsInf(f, -1):
		return "-Infinity"
	}
	return vibesJSON.Number(vibesStrconv.FormatFloat(f, 'g', -1, bits))
}

// vibesEncodeMap: a list of [key, value] pairs (keys of any type; nil map: null).
func vibesEncodeMap(v vibesReflect.Value, t vibesReflect.Type, depth int) (interface{}, error) {
	if v.IsNil() {
		return nil, nil
	}
	out := make([]interface{}, 0, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		k, err := vibesEncode(iter.Key(), t.Key(), depth+1)
		if err != nil {
			return nil, err
		}
		item, err := vibesEncode(iter.Value(), t.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, []interface{}{k, item})
	}
	return out, nil
}

// vibesEncodeDynamic: an interface value as {"$t": its dynamic type, "v": its value}.
func vibesEncodeDynamic(v vibesReflect.Value, depth int) (interface{}, error) {
	if v.IsNil() {
		return map[string]interface{}{"$t": "nil"}, nil
	}
	inner := v.Elem()
	name, err := vibesTypeName(inner.Type())
	if err != nil {
		return nil, err
	}
	item, err := vibesEncode(inner, inner.Type(), depth+1)
	if err != nil {
		return nil, err
	}
	return map[string]interface{}{"$t": name, "v": item}, nil
}

// vibesTypeName names the types the wire carries, as Go spells them; others are refused
// (a type of the program's own could not be rebuilt on the other side).
func vibesTypeName(t vibesReflect.Type) (string, error) {
	if b, ok := vibesBasic[t.Name()]; ok && b == t {
		return t.Name(), nil
	}
	if t.Name() == "" {
		switch t.Kind() {
		case vibesReflect.Slice, vibesReflect.Array:
			elem, err := vibesTypeName(t.Elem())
			if err != nil {
				return "", err
			}
			if t.Kind() == vibesReflect.Slice {
				return "[]" + elem, nil
			}
			return "[" + vibesStrconv.Itoa(t.Len()) + "]" + elem, nil
		case vibesReflect.Map:
			k, err := vibesTypeName(t.Key())
			if err != nil {
				return "", err
			}
			v, err := vibesTypeName(t.Elem())
			if err != nil {
				return "", err
			}
			return "map[" + k + "]" + v, nil
		case vibesReflect.Interface:
			if t.NumMethod() == 0 {
				return "interface {}", nil
			}
		}
	}
	return "", vibesFmt.Errorf("the wire cannot carry a %s", t)
}

// -- decoding -------------------------------------------------------------------------

// vibesDecode turns a tree of JSON values into a value of type t, or an error; it never
// panics (reflect's own refusals, e.g. an unhashable map key, become errors).
func vibesDecode(tree interface{}, t vibesReflect.Type) (v vibesReflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = vibesReflect.Value{}, vibesFmt.Errorf("a value that does not fit %s: %v", t, r)
		}
	}()
	return vibesDecodeAt(tree, t, 0)
}

func vibesDecodeAt(tree interface{}, t vibesReflect.Type, depth int) (vibesReflect.Value, error) {
	if depth > vibesMaxDepth {
		return vibesReflect.Value{}, vibesErrors.New("a value nested too deeply")
	}
	bad := func() (vibesReflect.Value, error) {
		return vibesReflect.Value{}, vibesFmt.Errorf("a value that is not a %s", t)
	}
	// scalars only: an array type is allocated once its length was checked
	out := vibesReflect.New(vibesBasic["bool"]).Elem()
	if t.Kind() <= vibesReflect.Complex128 || t.Kind() == vibesReflect.String {
		out = vibesReflect.New(t).Elem()
	}
	switch t.Kind() {
	case vibesReflect.Bool:
		b, ok := tree.(bool)
		if !ok {
			return bad()
		}
		out.SetBool(b)
	case vibesReflect.Int, vibesReflect.Int8, vibesReflect.Int16, vibesReflect.Int32, vibesReflect.Int64:
		n, ok := tree.(vibesJSON.Number)
		i, err := vibesStrconv.ParseInt(string(n), 10, t.Bits())
		if !ok || err != nil {
			return bad()
		}
		out.SetInt(i)
	case vibesReflect.Uint, vibesReflect.Uint8, vibesReflect.Uint16, vibesReflect.Uint32, vibesReflect.Uint64,
		vibesReflect.Uintptr:
		n, ok := tree.(vibesJSON.Number)
		u, err := vibesStrconv.ParseUint(string(n), 10, t.Bits())
		if !ok || err != nil {
			return bad()
		}
		out.SetUint(u)
	case vibesReflect.Float32, vibesReflect.Float64:
		f, ok := vibesDecodeFloat(tree, t.Bits())
		if !ok {
			return bad()
		}
		out.SetFloat(f)
	case vibesReflect.String:
		s, ok := vibesDecodeString(tree)
		if !ok {
			return bad()
		}
		out.SetString(s)
	case vibesReflect.Slice, vibesReflect.Array:
		return vibesDecodeList(tree, t, depth)
	case vibesReflect.Map:
		return vibesDecodeMap(tree, t, depth)
	case vibesReflect.Interface:
		if t.NumMethod() != 0 {
			return bad()
		}
		return vibesDecodeDynamic(tree, t, depth)
	default:
		return vibesReflect.Value{}, vibesFmt.Errorf("the wire cannot carry a %s", t)
	}
	return out, nil
}

func vibesDecodeFloat(tree interface{}, bits int) (float64, bool) {
	switch x := tree.(type) {
	case vibesJSON.Number:
		f, err := vibesStrconv.ParseFloat(string(x), bits)
		return f, err == nil
	case string:
		switch x {
		case "NaN":
			return vibesMath.NaN(), true
		case "Infinity":
			return vibesMath.Inf(1), true
		case "-Infinity":
			return vibesMath.Inf(-1), true
		}
	}
	return 0, false
}

func vibesDecodeString(tree interface{}) (string, bool) {
	switch x := tree.(type) {
	case string:
		return x, true
	case map[string]interface{}:
		enc, ok := x["$bytes"].(string)
		if !ok || len(x) != 1 {
			return "", false
		}
		raw, err := vibesBase64.StdEncoding.DecodeString(enc)
		return string(raw), err == nil
	}
	return "", false
}

func vibesDecodeList(tree interface{}, t vibesReflect.Type, depth int) (vibesReflect.Value, error) {
	if tree == nil && t.Kind() == vibesReflect.Slice {
		return vibesReflect.Zero(t), nil
	}
	items, ok := tree.([]interface{})
	if !ok || (t.Kind() == vibesReflect.Array && len(items) != t.Len()) {
		return vibesReflect.Value{}, vibesFmt.Errorf("a value that is not a %s", t)
	}
	out := vibesReflect.New(t).Elem()
	if t.Kind() == vibesReflect.Slice {
		out = vibesReflect.MakeSlice(t, len(items), len(items))
	}
	for i, item := range items {
		v, err := vibesDecodeAt(item, t.Elem(), depth+1)
		if err != nil {
			return vibesReflect.Value{}, err
		}
		out.Index(i).Set(v)
	}
	return out, nil
}

func vibesDecodeMap(tree interface{}, t vibesReflect.Type, depth int) (vibesReflect.Value, error) {
	if tree == nil {
		return vibesReflect.Zero(t), nil
	}
	pairs, ok := tree.([]interface{})
	if !ok {
		return vibesReflect.Value{}, vibesFmt.Errorf("a value that is not a %s", t)
	}
	out := vibesReflect.MakeMapWithSize(t, len(pairs))
	for _, p := range pairs {
		pair, ok := p.([]interface{})
		if !ok || len(pair) != 2 {
			return vibesReflect.Value{}, vibesFmt.Errorf("a value that is not a %s", t)
		}
		k, err := vibesDecodeAt(pair[0], t.Key(), depth+1)
		if err != nil {
			return vibesReflect.Value{}, err
		}
		v, err := vibesDecodeAt(pair[1], t.Elem(), depth+1)
		if err != nil {
			return vibesReflect.Value{}, err
		}
		out.SetMapIndex(k, v) // an unhashable key panics: vibesDecode makes it an error
	}
	return out, nil
}

// vibesDecodeDynamic: {"$t": type, "v": value} into an interface of type t.
func vibesDecodeDynamic(tree interface{}, t vibesReflect.Type, depth int) (vibesReflect.Value, error) {
	obj, ok := tree.(map[string]interface{})
	name, named := obj["$t"].(string)
	if !ok || !named {
		return vibesReflect.Value{}, vibesErrors.New("a dynamic value without its type")
	}
	out := vibesReflect.New(t).Elem()
	if name == "nil" && len(obj) == 1 {
		return out, nil
	}
	inner, has := obj["v"]
	if !has || len(obj) != 2 {
		return vibesReflect.Value{}, vibesErrors.New("a malformed dynamic value")
	}
	dyn, err := vibesParseType(name)
	if err != nil {
		return vibesReflect.Value{}, err
	}
	v, err := vibesDecodeAt(inner, dyn, depth+1)
	if err != nil {
		return vibesReflect.Value{}, err
	}
	out.Set(v)
	return out, nil
}

// vibesParseType rebuilds a type from the name vibesTypeName gave it.
func vibesParseType(name string) (vibesReflect.Type, error) {
	if len(name) > vibesMaxType {
		return nil, vibesErrors.New("a type name too long")
	}
	t, rest, err := vibesParseTypeAt(name, 0)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, vibesFmt.Errorf("an unknown type %q", name)
	}
	return t, nil
}

func vibesParseTypeAt(s string, depth int) (vibesReflect.Type, string, error) {
	if depth > 64 {
		return nil, "", vibesErrors.New("a type nested too deeply")
	}
	switch {
	case vibesStrings.HasPrefix(s, "interface {}"):
		return vibesEmptyInterface, s[len("interface {}"):], nil
	case vibesStrings.HasPrefix(s, "[]"):
		elem, rest, err := vibesParseTypeAt(s[2:], depth+1)
		if err != nil {
			return nil, "", err
		}
		return vibesReflect.SliceOf(elem), rest, nil
	case vibesStrings.HasPrefix(s, "["):
		end := vibesStrings.IndexByte(s, ']')
		n, err := vibesStrconv.Atoi(s[1:vibesMax1(end)])
		if end < 0 || err != nil || n < 0 || n > vibesMaxArray {
			return nil, "", vibesFmt.Errorf("an unknown type %q", s)
		}
		elem, rest, err := vibesParseTypeAt(s[end+1:], depth+1)
		if err != nil {
			return nil, "", err
		}
		return vibesReflect.ArrayOf(n, elem), rest, nil
	case vibesStrings.HasPrefix(s, "map["):
		return vibesParseMapType(s, depth)
	}
	for name, t := range vibesBasic {
		rest := vibesStrings.TrimPrefix(s, name)
		// the longest name wins: "int" must not take the start of "int64"
		if rest != s && (rest == "" || !vibesIdentChar(rest[0])) {
			return t, rest, nil
		}
	}
	return nil, "", vibesFmt.Errorf("an unknown type %q", s)
}

func vibesParseMapType(s string, depth int) (vibesReflect.Type, string, error) {
	key, rest, err := vibesParseTypeAt(s[len("map["):], depth+1)
	if err != nil {
		return nil, "", err
	}
	if !vibesStrings.HasPrefix(rest, "]") || !key.Comparable() {
		return nil, "", vibesFmt.Errorf("an unknown type %q", s)
	}
	elem, rest, err := vibesParseTypeAt(rest[1:], depth+1)
	if err != nil {
		return nil, "", err
	}
	return vibesReflect.MapOf(key, elem), rest, nil
}

func vibesIdentChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func vibesMax1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
