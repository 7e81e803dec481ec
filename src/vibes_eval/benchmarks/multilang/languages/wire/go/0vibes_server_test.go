package main

// The candidate's side of the wire: a server that reads calls, decodes their arguments
// by the entry point's own parameter types, calls it, and answers with the result
// encoded by its return type, or with what it panicked with.

import (
	vibesBufio "bufio"
	vibesFmt "fmt"
	vibesOS "os"
	vibesReflect "reflect"
	vibesSyscall "syscall"
)

// The channel, taken before any of the completion's code runs (this file's name sorts
// first, and package variables initialize in file order, init functions after them):
// stdin and stdout move to descriptors of the wire's own, stdin becomes /dev/null and
// stdout stderr. So the completion's prints never reach the test program, and it can
// not read the calls meant for the server.
var vibesChannel = vibesTakeChannel()

type vibesWire struct {
	in  *vibesBufio.Reader
	out *vibesOS.File
}

func vibesTakeChannel() *vibesWire {
	in, err := vibesSyscall.Dup(0)
	if err != nil {
		return nil
	}
	out, err := vibesSyscall.Dup(1)
	if err != nil {
		return nil
	}
	vibesSyscall.CloseOnExec(in)
	vibesSyscall.CloseOnExec(out)
	null, err := vibesSyscall.Open("/dev/null", vibesSyscall.O_RDONLY, 0)
	if err != nil || vibesSyscall.Dup3(null, 0, 0) != nil || vibesSyscall.Dup3(2, 1, 0) != nil {
		return nil
	}
	vibesSyscall.Close(null)
	vibesOS.Stdout = vibesOS.Stderr
	return &vibesWire{
		in:  vibesBufio.NewReaderSize(vibesOS.NewFile(uintptr(in), "vibes-wire-in"), 64<<10),
		out: vibesOS.NewFile(uintptr(out), "vibes-wire-out"),
	}
}

// vibesServe answers calls of entry until the test program closes the channel.
func vibesServe(entry interface{}) {
	if vibesChannel == nil {
		vibesOS.Exit(3)
	}
	fn := vibesReflect.ValueOf(entry)
	for {
		kind, payload, err := vibesReadFrame(vibesChannel.in)
		if err != nil || kind != "call" {
			vibesOS.Exit(0) // the test program ended: nothing left to answer
		}
		kind, value := vibesServeCall(fn, payload)
		if vibesWriteFrame(vibesChannel.out, kind, value) != nil {
			vibesOS.Exit(0)
		}
	}
}

// vibesServeCall runs one call: ("ret", the encoded result) or ("raise", why not).
func vibesServeCall(fn vibesReflect.Value, payload []byte) (kind string, value interface{}) {
	ft := fn.Type()
	tree, err := vibesParse(payload)
	items, ok := tree.([]interface{})
	if err != nil || !ok || len(items) != ft.NumIn() || ft.NumOut() != 1 || ft.IsVariadic() {
		return "raise", "vibes: a call that does not fit the entry point"
	}
	args := make([]vibesReflect.Value, len(items))
	for i, item := range items {
		if args[i], err = vibesDecode(item, ft.In(i)); err != nil {
			return "raise", vibesFmt.Sprintf("vibes: argument %d: %v", i+1, err)
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
	s := vibesFmt.Sprint(r)
	if len(s) > 2000 {
		s = s[:2000]
	}
	return s
}
