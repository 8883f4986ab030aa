package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/node"
)

// A dead letter's own columns: what was refused and why. Its CloudEvent
// id (a fresh ULID) and source (jido-bus:dlq) are the same kind on every
// row and said nothing a reader looks for.
var deadLetterColumns = []string{"STREAM", "SEQ", "COMMITTED", "REASON", "SUBJECT", "ERROR"}

// maxDeadLetterError bounds the ERROR column (-o json has the whole
// message).
const maxDeadLetterError = 200

// isDeadLetters reports whether stream holds dead letters only.
func isDeadLetters(stream string) bool { return stream == node.DeadLetterStream }

// deadLetterRow is a dead letter's row of a table; ok is false for an
// entry that is no dead letter (it then gets the plain row).
func deadLetterRow(e logapi.Entry, ev bus.Signal) ([]any, bool) {
	if ev.Type() != natsbus.DeadLetterType {
		return nil, false
	}
	var d natsbus.DeadLetter
	if err := json.Unmarshal(ev.Data(), &d); err != nil {
		return nil, false
	}
	msg := strings.Join(strings.Fields(d.Error), " ")
	if r := []rune(msg); len(r) > maxDeadLetterError {
		msg = string(r[:maxDeadLetterError-1]) + "…"
	}
	if d.Truncated {
		msg += fmt.Sprintf(" [stored truncated: %d bytes]", d.Size)
	}
	return []any{e.Stream, e.Seq, e.Time.Local().Format(time.DateTime), d.Reason, d.Subject, msg}, true
}
