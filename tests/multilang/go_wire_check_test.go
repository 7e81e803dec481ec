package main

// The wire's own checks (tests/multilang/test_go_split.py builds this file with the wire
// sources and runs it): values of every carried type come back equal, nil and empty
// apart; hostile payloads are errors, never values and never panics.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
)

// roundTrip sends *ptr through a frame and decodes it by the same static type.
func roundTrip(t *testing.T, ptr interface{}) reflect.Value {
	t.Helper()
	v := reflect.ValueOf(ptr).Elem()
	enc, err := vibesEncode(v, v.Type(), 0)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	var buf bytes.Buffer
	buf.WriteString("stray output\n")
	if err := vibesWriteFrame(&buf, "ret", enc); err != nil {
		t.Fatal(err)
	}
	kind, payload, err := vibesReadFrame(bufio.NewReader(&buf))
	if err != nil || kind != "ret" {
		t.Fatalf("read back: %q %v", kind, err)
	}
	tree, err := vibesParse(payload)
	if err != nil {
		t.Fatal(err)
	}
	got, err := vibesDecode(tree, v.Type())
	if err != nil {
		t.Fatalf("decode %s: %v", payload, err)
	}
	return got
}

func TestRoundTrips(t *testing.T) {
	values := []interface{}{
		&[]interface{}{4, nil, []interface{}{}, 23.2, 9, "adasd", 'c', [2]int{1, 2}, uint8(3),
			map[interface{}]interface{}{"a": 1, 5: []int{1}}, int64(math.MinInt64),
			uint64(math.MaxUint64), float32(1.5), true, map[string][]string(nil)},
		&map[rune]int{'a': 1, 'é': 2}, &[2]interface{}{nil, 3}, &[][2]int{{1, 2}},
		&[]int{}, new([]int), new(map[string]int), &map[string]int{},
		&[]string{"\xff\xfe not UTF-8", "\x02V ret 1\n", ""}, &[]float64{0.1, -0, 1e308, 5e-324},
		&[]float32{3.4e38, 1e-45}, new(interface{}),
	}
	for _, ptr := range values {
		got := roundTrip(t, ptr)
		want := reflect.ValueOf(ptr).Elem().Interface()
		if !reflect.DeepEqual(got.Interface(), want) {
			t.Errorf("round trip: got %#v, want %#v", got.Interface(), want)
		}
	}
	floats := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	got := roundTrip(t, &floats).Interface().([]float64)
	if !math.IsNaN(got[0]) || !math.IsInf(got[1], 1) || !math.IsInf(got[2], -1) {
		t.Errorf("non-finite floats: %v", got)
	}
}

func TestHostileValuesAreErrors(t *testing.T) {
	typeOf := func(p interface{}) reflect.Type { return reflect.TypeOf(p).Elem() }
	cases := []struct {
		typ      reflect.Type
		payloads []string
	}{
		{typeOf(new(int)), []string{`"8"`, `8.0`, `1e3`, `{"$t": "int", "v": 8}`, `null`, `[8]`,
			`true`, `99999999999999999999`}},
		{typeOf(new(int8)), []string{`128`, `-129`}},
		{typeOf(new(uint)), []string{`-1`}},
		{typeOf(new([]int)), []string{`{"a": 1}`, `[1, "x"]`, `[1.5]`}},
		{typeOf(new([2]int)), []string{`[1]`, `[1, 2, 3]`, `null`}},
		{typeOf(new(map[string]int)), []string{`[[1, 2]]`, `[["a"]]`, `{"a": 1}`}},
		{typeOf(new(float64)), []string{`"nan"`, `"Infinity "`, `1e999`, `null`}},
		{typeOf(new(float32)), []string{`1e39`}},
		{typeOf(new(string)), []string{`{"$bytes": "!!"}`, `{"$bytes": "AA==", "x": 1}`, `5`}},
		{typeOf(new(interface{})), []string{`8`, `null`, `{"$t": "main.atk", "v": 1}`,
			`{"$t": "[16777216]int", "v": [1]}`, `{"$t": "map[[]int]int", "v": []}`,
			`{"$t": "map[interface {}]int", "v": [[{"$t": "[]int", "v": [1]}, 1]]}`,
			`{"$t": "[]int", "v": [1], "w": 0}`, `{"$t": "nil", "v": 1}`, `{"$t": "int"}`,
			`{"$t": "` + strings.Repeat("[]", 600) + `int", "v": null}`,
			`{"$t": "[99999999999]int", "v": []}`, `{"$t": "int ", "v": 1}`,
			`{"$t": "[16777216][16777216][16777216]int", "v": []}`, `{"$t": "*int", "v": 1}`,
			`{"$t": "error", "v": "x"}`, `{"$t": "func()", "v": null}`}},
	}
	for _, c := range cases {
		for _, p := range c.payloads {
			tree, err := vibesParse([]byte(p))
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if v, err := vibesDecode(tree, c.typ); err == nil {
				t.Errorf("%s as %s: decoded to %#v", p, c.typ, v.Interface())
			}
		}
	}
}

func TestHostileFramesAreErrors(t *testing.T) {
	read := func(s string) error {
		_, payload, err := vibesReadFrame(bufio.NewReaderSize(strings.NewReader(s), 64<<10))
		if err == nil {
			_, err = vibesParse(payload)
		}
		return err
	}
	for _, s := range []string{
		"\x02V ret 1",     // cut by EOF
		"\x02V ret\n",     // no value
		"\x02V ret 1 2\n", // data after the value
		"\x02V ret [1,\n", // malformed
		"\x02V ret " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"\x02V ret " + strings.Repeat("1", vibesMaxFrame+64) + "\n",
		strings.Repeat("x", 1<<20), // stray output, never a frame
	} {
		if err := read(s); err == nil {
			t.Errorf("accepted %.40q", s)
		}
	}
	if err := read("junk \x02V ret 1\n"); !errors.Is(err, io.EOF) {
		t.Errorf("a marker inside a line is no frame: %v", err)
	}
	if err := read(strings.Repeat("x", 1<<20) + "\n\x02V ret 1\n"); err != nil {
		t.Errorf("a frame after long stray output: %v", err)
	}
}

type own struct{ x int }

func TestServerAnswers(t *testing.T) {
	div := reflect.ValueOf(func(a, b int) int { return a / b })
	if kind, v := vibesServeCall(div, []byte(`[6, 3]`)); kind != "ret" || fmt.Sprint(v) != "2" {
		t.Errorf("6/3: %s %#v", kind, v)
	}
	for _, call := range []string{`[6, 0]`, `[6]`, `[6, "x"]`, `{}`, `[`} {
		if kind, v := vibesServeCall(div, []byte(call)); kind != "raise" {
			t.Errorf("%s: %s %#v", call, kind, v)
		}
	}
	mine := reflect.ValueOf(func() interface{} { return own{1} })
	if kind, v := vibesServeCall(mine, []byte(`[]`)); kind != "raise" {
		t.Errorf("a type of the program's own was sent: %#v", v)
	}
	loop := []interface{}{nil}
	loop[0] = loop
	cyclic := reflect.ValueOf(func() []interface{} { return loop })
	if kind, _ := vibesServeCall(cyclic, []byte(`[]`)); kind != "raise" {
		t.Errorf("a cyclic value was sent")
	}
}
