package runtime

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// EmitCursor is a position among the emits of the log, in the terms of a
// read (ReadEmits): in one stream, Seq is a stream sequence (the
// Jido-Seq header of an emit); across the log, a global sequence
// (Jido-Global-Seq). Index is an emit's index in the directives of the
// decision at Seq (Jido-Emit-Index); a negative Index stands for the
// whole decision.
//
// Its text form, which JSON carries as a string, is "SEQ.INDEX" for an
// emit ("12.1": emit 1 of the decision at 12) and "SEQ" for the whole
// decision at SEQ ("12": all of it; "0": nothing yet, the start). JSON
// also accepts a plain number for the latter.
type EmitCursor struct {
	Seq   uint64
	Index int
}

// EmitCursorAt is the cursor of everything at seq (and before it).
func EmitCursorAt(seq uint64) EmitCursor { return EmitCursor{Seq: seq, Index: -1} }

// whole reports whether c covers the whole decision at c.Seq.
func (c EmitCursor) whole() bool { return c.Index < 0 || c.Seq == 0 }

// covers reports whether the emit at index of the decision at seq is at
// or before c: a reader after c has it already.
func (c EmitCursor) covers(seq uint64, index int) bool {
	return seq < c.Seq || (seq == c.Seq && (c.whole() || index <= c.Index))
}

// String is the text form.
func (c EmitCursor) String() string {
	if c.whole() {
		return strconv.FormatUint(c.Seq, 10)
	}
	return strconv.FormatUint(c.Seq, 10) + "." + strconv.Itoa(c.Index)
}

// ParseEmitCursor reads the text form. The error is a *bus.Error of type
// invalid_request.
func ParseEmitCursor(s string) (EmitCursor, error) {
	seq, index, dotted := strings.Cut(s, ".")
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return EmitCursor{}, bus.Errorf(bus.ReasonInvalidRequest, "position %q: want SEQ (after everything at that sequence) or SEQ.INDEX (after that emit of the decision at SEQ), as an emit's Jido-Seq and Jido-Emit-Index headers or a read's next give it", s)
	}
	if !dotted {
		return EmitCursorAt(n), nil
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 {
		return EmitCursor{}, bus.Errorf(bus.ReasonInvalidRequest, "position %q: the index after the dot is an emit's index in its decision, 0 or more", s)
	}
	return EmitCursor{Seq: n, Index: i}, nil
}

// MarshalText writes the text form.
func (c EmitCursor) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads the text form.
func (c *EmitCursor) UnmarshalText(b []byte) error {
	v, err := ParseEmitCursor(string(b))
	if err == nil {
		*c = v
	}
	return err
}

// UnmarshalJSON reads the text form from a string, or a number (a whole
// sequence).
func (c *EmitCursor) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return c.UnmarshalText([]byte(s))
	}
	if string(b) == "null" {
		return nil
	}
	return c.UnmarshalText(b)
}
