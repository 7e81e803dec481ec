package main

// The candidate's side of the wire: a server that reads calls, decodes their arguments
// by the entry point's own parameter types, calls it, and answers with the result
// encoded by its return type, or with what it panicked with.

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"syscall"
)

// vibesServe answers calls of entry until the test program closes the channel. The
// completion's own prints go to stderr (fd 1 too): only answers reach the channel.
func vibesServe(entry interface{}) {
	fd, err := syscall.Dup(1)
	if err != nil {
		os.Exit(3)
	}
	syscall.CloseOnExec(fd)
	out := os.NewFile(uintptr(fd), "vibes-wire")
	if syscall.Dup3(2, 1, 0) != nil {
		os.Exit(3)
	}
	os.Stdout = os.Stderr
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	fn := reflect.ValueOf(entry)
	for {
		kind, payload, err := vibesReadFrame(in)
		if err != nil || kind != "call" {
			os.Exit(0) // the test program ended: nothing left to answer
		}
		kind, value := vibesServeCall(fn, payload)
		if vibesWriteFrame(out, kind, value) != nil {
			os.Exit(0)
		}
	}
}

// vibesServeCall runs one call: ("ret", the encoded result) or ("raise", why not).
func vibesServeCall(fn reflect.Value, payload []byte) (kind string, value interface{}) {
	ft := fn.Type()
	tree, err := vibesParse(payload)
	items, ok := tree.([]interface{})
	if err != nil || !ok || len(items) != ft.NumIn() || ft.NumOut() != 1 || ft.IsVariadic() {
		return "raise", "vibes: a call that does not fit the entry point"
	}
	args := make([]reflect.Value, len(items))
	for i, item := range items {
		if args[i], err = vibesDecode(item, ft.In(i)); err != nil {
			return "raise", fmt.Sprintf("vibes: argument %d: %v", i+1, err)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			kind, value = "raise", vibesPanicText(r)
		}
	}()
	res := fn.Call(args)
	enc, err := vibesEncode(res[0], ft.Out(0), 0)
	if err != nil {
		return "raise", "the result cannot be sent: " + err.Error()
	}
	return "ret", enc
}

func vibesPanicText(r interface{}) string {
	s := fmt.Sprint(r)
	if len(s) > 2000 {
		s = s[:2000]
	}
	return s
}
