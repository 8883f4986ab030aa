package policy

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// commandStdin points the helper's stdin (fd 0, which the command
// inherits) at /dev/null, or at a pipe that gives the command data and
// then end of file. The pipe's write end is close-on-exec and written by
// the helper alone, so the command cannot hold it open; a command that
// does not read what it was given leaves the writer blocked only until
// the command ends, when the helper reports and exits.
func commandStdin(data []byte) error {
	if len(data) == 0 {
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			return fmt.Errorf("sandbox-exec: %w", err)
		}
		defer devnull.Close()
		if err := unix.Dup2(int(devnull.Fd()), 0); err != nil {
			return fmt.Errorf("sandbox-exec: stdin from /dev/null: %w", err)
		}
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox-exec: stdin pipe: %w", err)
	}
	defer r.Close()
	if err := unix.Dup2(int(r.Fd()), 0); err != nil {
		w.Close()
		return fmt.Errorf("sandbox-exec: stdin from a pipe: %w", err)
	}
	go func() {
		w.Write(data) // a command that exits without reading it is not an error
		w.Close()
	}()
	return nil
}
