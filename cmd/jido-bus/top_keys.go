package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// keyCtrlC is what Ctrl-C sends on a terminal in raw mode, where it no
// longer raises SIGINT.
const keyCtrlC = 0x03

// watchQuitKeys reads keys from r and closes the returned channel at q, Q
// or Ctrl-C, or when r ends. The goroutine ends with r (a terminal's read
// cannot be interrupted: it ends with the process).
func watchQuitKeys(r io.Reader) <-chan struct{} {
	quit := make(chan struct{})
	go func() {
		defer close(quit)
		buf := make([]byte, 64)
		for {
			n, err := r.Read(buf)
			for _, b := range buf[:n] {
				if b == 'q' || b == 'Q' || b == keyCtrlC {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return quit
}

// rawTerminal puts the terminal r into raw mode, so that a key arrives
// without Enter, and returns what restores it.
func rawTerminal(r io.Reader) (restore func(), err error) {
	f, ok := r.(*os.File)
	if !ok {
		return func() {}, nil
	}
	fd := int(f.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, err
	}
	return func() { _ = term.Restore(fd, old) }, nil
}
