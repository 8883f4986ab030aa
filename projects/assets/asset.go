// Package assets loads a project's markdown assets — skills, commands,
// workflows and the skill graph — from its data directory (see
// projects/layout) into an immutable snapshot, and reloads it when files
// change. A broken file is a Diagnostic, never a crash and never a
// half-loaded asset: the rest of the set loads.
package assets

import (
	"fmt"
	"time"
)

// Source records where an asset came from: its file, relative to the
// project's data directory with '/' separators (e.g.
// "skills/review/SKILL.md"), the sha256 of its bytes in hex, and when it
// was read.
type Source struct {
	File     string    `json:"file"`
	Hash     string    `json:"hash"`
	LoadedAt time.Time `json:"loaded_at"`
}

// Diagnostic is one problem found while loading: the file (as in Source),
// the 1-based line when one can be named (0 when it is about the whole
// file), and what is wrong, for a person.
type Diagnostic struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

// String is the diagnostic as file:line: reason (file: reason without a
// line), the form editors and compilers use.
func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Reason)
	}
	return fmt.Sprintf("%s: %s", d.File, d.Reason)
}
