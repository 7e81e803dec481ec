package main

// The trusted test program's side of the wire: the entry point's stub (generated with the
// entry point's own signature) sends its arguments to the candidate and returns the
// answer decoded by the declared return type. Anything else on the channel (EOF, a
// malformed, oversized or ill-typed answer) panics in the test, which then fails.

import (
	vibesBufio "bufio"
	vibesErrors "errors"
	vibesFmt "fmt"
	vibesIO "io"
	vibesOS "os"
	vibesReflect "reflect"
	vibesStrings "strings"
	vibesSync "sync"
	vibesSyscall "syscall"
)

var (
	vibesOnce vibesSync.Once
	vibesMu   vibesSync.Mutex
	vibesIn   *vibesBufio.Reader
	vibesOut  *vibesOS.File
)

// vibesSetup keeps stdin and stdout for the wire alone: whatever the tests print
// (testing's own -test.v lines included) goes to stderr, through fd 1 as well.
func vibesSetup() {
	vibesOnce.Do(func() {
		fd, err := vibesSyscall.Dup(1)
		if err != nil {
			panic("vibes: no channel: " + err.Error())
		}
		vibesSyscall.CloseOnExec(fd)
		vibesOut = vibesOS.NewFile(uintptr(fd), "vibes-wire")
		if err := vibesSyscall.Dup3(2, 1, 0); err != nil {
			panic("vibes: no channel: " + err.Error())
		}
		vibesOS.Stdout = vibesOS.Stderr
		vibesIn = vibesBufio.NewReaderSize(vibesOS.Stdin, 64<<10)
	})
}

// vibesCall calls the candidate: ret points at the result, args at the arguments (so
// their static types, the entry point's parameter types, reach the encoder).
func vibesCall(ret interface{}, args ...interface{}) {
	vibesSetup()
	vibesMu.Lock()
	defer vibesMu.Unlock()
	values := make([]interface{}, len(args))
	for i, arg := range args {
		v := vibesReflect.ValueOf(arg).Elem()
		enc, err := vibesEncode(v, v.Type(), 0)
		if err != nil {
			panic(vibesFmt.Sprintf("vibes: argument %d: %v", i+1, err))
		}
		values[i] = enc
	}
	if err := vibesWriteFrame(vibesOut, "call", values); err != nil {
		// the candidate ended (and closed the pipe) before it read the call: as EOF
		panic("vibes: the candidate ended without answering")
	}
	vibesAnswer(ret)
}

// vibesAnswer reads the candidate's answer into *ret, or panics with why it cannot.
func vibesAnswer(ret interface{}) {
	kind, payload, err := vibesReadFrame(vibesIn)
	if vibesErrors.Is(err, vibesIO.EOF) {
		panic("vibes: the candidate ended without answering")
	}
	if err != nil {
		panic("vibes: a bad answer from the candidate: " + err.Error())
	}
	tree, err := vibesParse(payload)
	if err != nil {
		panic("vibes: a bad answer from the candidate: " + err.Error())
	}
	switch kind {
	case "ret":
		out := vibesReflect.ValueOf(ret).Elem()
		v, err := vibesDecode(tree, out.Type())
		if err != nil {
			panic("vibes: a bad answer from the candidate: " + err.Error())
		}
		out.Set(v)
	case "raise":
		msg, ok := tree.(string)
		if !ok {
			panic("vibes: a bad answer from the candidate: a raise without a message")
		}
		panic("the candidate panicked: " + vibesOneLine(msg))
	default:
		panic("vibes: a bad answer from the candidate: a frame of kind " + vibesQuote(kind))
	}
}

// vibesOneLine: the candidate's text on one line of at most 500 bytes (it must not
// write lines of its own into the test's output).
func vibesOneLine(s string) string {
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return vibesStrings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func vibesQuote(s string) string {
	return vibesFmt.Sprintf("%q", vibesOneLine(s))
}
