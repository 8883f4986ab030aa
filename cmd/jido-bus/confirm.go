package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// A destructive command (log truncate, agent stop of a parent) changes
// what cannot be changed back. It asks on a terminal, takes --yes to skip
// the question, and refuses without --yes when nobody is there to answer
// (a script, a pipe, cron): silence is never consent.

// addYesFlag registers --yes on a destructive command.
func addYesFlag(cmd *cobra.Command, yes *bool) {
	cmd.Flags().BoolVarP(yes, "yes", "y", false, "do it without asking (required when stdin is not a terminal)")
}

// errNotConfirmed is what a destructive command returns when the answer
// was not yes.
var errNotConfirmed = errors.New("not confirmed; nothing was changed")

// confirm asks question (what will happen) on the terminal and returns
// nil when the answer is yes. With yes set it does not ask. When stdin is
// not a terminal it refuses, saying to pass --yes.
func confirm(cmd *cobra.Command, yes bool, question string) error {
	if yes {
		return nil
	}
	in := cmd.InOrStdin()
	if !isTerminalReader(in) {
		return fmt.Errorf("%s? refused: stdin is not a terminal to ask on; pass --yes to do it (or --dry-run to see what it would do)", question)
	}
	ok, err := askYesNo(in, cmd.ErrOrStderr(), question)
	if err != nil {
		return err
	}
	if !ok {
		return errNotConfirmed
	}
	return nil
}

// askYesNo writes "question [y/N] " to w and reads one line from in: y or
// yes (any case) is yes; anything else, an empty line or the end of input
// is no.
func askYesNo(in io.Reader, w io.Writer, question string) (bool, error) {
	if _, err := fmt.Fprintf(w, "%s? [y/N] ", question); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// isTerminalReader reports whether r is a terminal a person can answer on.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
