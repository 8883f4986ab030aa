package testkit

import (
	"runtime"
	"strings"
)

// BlockedIn reports whether some goroutine is blocked — waiting on a
// lock, a channel, a condition, a sleep, not running or runnable — with
// fn on its stack. fn is a function as a stack trace names it, with its
// package path or from a path element on:
// "agents/runtime.(*server).passivate".
//
// A test that must show something does not happen while a goroutine is
// held back waits for BlockedIn instead of sleeping: once the goroutine is
// blocked there, it got as far as it can, deterministically.
func BlockedIn(fn string) bool {
	for _, g := range strings.Split(allStacks(), "\n\n") {
		header, frames, _ := strings.Cut(g, "\n")
		if !blocked(header) {
			continue
		}
		for line := range strings.SplitSeq(frames, "\n") {
			if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "created by ") {
				continue
			}
			i := strings.LastIndex(line, "(")
			if i < 0 {
				continue
			}
			if name := line[:i]; name == fn || strings.HasSuffix(name, "/"+fn) {
				return true
			}
		}
	}
	return false
}

// blocked reports whether a goroutine whose trace begins with header
// ("goroutine 7 [sync.Mutex.Lock]:", "goroutine 1 [running]:") waits.
func blocked(header string) bool {
	_, state, ok := strings.Cut(header, " [")
	if !ok {
		return false
	}
	state, _, _ = strings.Cut(state, "]")
	state, _, _ = strings.Cut(state, ",") // "chan receive, 2 minutes"
	switch state {
	case "running", "runnable", "syscall":
		return false
	}
	return true
}

// allStacks is the trace of every goroutine, as a panic prints them.
func allStacks() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
