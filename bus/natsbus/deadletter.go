package natsbus

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// Headers a dead letter carries besides the original message's own.
const (
	HeaderDLQReason  = "jido-dlq-reason"  // the machine word, as in the subject
	HeaderDLQError   = "jido-dlq-error"   // the message for a person
	HeaderDLQSubject = "jido-dlq-subject" // where the original was published
	HeaderDLQTime    = "jido-dlq-time"    // when it was refused, RFC 3339
)

// DeadLetterType is the CloudEvents type of a dead letter in the log.
const DeadLetterType = "jido.deadletter"

// DeadLetter is a refused input: the original subject, headers and bytes,
// and why it was refused.
type DeadLetter struct {
	Reason  string      `json:"reason"`
	Error   string      `json:"error"`
	Subject string      `json:"subject"`
	Header  nats.Header `json:"header,omitempty"`
	Data    []byte      `json:"data,omitempty"` // encoded as base64 in JSON
	Time    time.Time   `json:"time"`
}

// Signal returns the dead letter as a CloudEvent of type DeadLetterType, the
// form in which it is appended to the log stream "dlq".
func (d DeadLetter) Signal() bus.Signal {
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetID(bus.NewID())
	s.SetSource("jido-bus:dlq")
	s.SetType(DeadLetterType)
	s.SetSubject(d.Subject)
	s.SetTime(d.Time)
	body, err := json.Marshal(d)
	if err != nil { // a DeadLetter is strings, bytes and a time
		panic(err)
	}
	s.DataEncoded = body
	s.SetDataContentType("application/json")
	return s
}

// deadLetter files msg under the reason of err: it publishes the original
// body and headers on <prefix>.dlq.<reason> and hands the record to
// Options.OnDeadLetter.
func (b *Bus) deadLetter(msg *nats.Msg, err error) {
	e := bus.AsError(err)
	d := DeadLetter{
		Reason:  e.Type,
		Error:   e.Message,
		Subject: msg.Subject,
		Header:  maps.Clone(msg.Header),
		Data:    msg.Data,
		Time:    b.now().UTC(),
	}
	out := &nats.Msg{Subject: b.opts.Subjects.DLQ(d.Reason), Data: msg.Data, Header: maps.Clone(msg.Header)}
	if out.Header == nil {
		out.Header = nats.Header{}
	}
	out.Header.Set(HeaderDLQReason, d.Reason)
	out.Header.Set(HeaderDLQError, d.Error)
	out.Header.Set(HeaderDLQSubject, d.Subject)
	out.Header.Set(HeaderDLQTime, d.Time.Format(time.RFC3339Nano))
	b.log.Warn("dead letter", "reason", d.Reason, "error", d.Error, "subject", d.Subject)
	// Counted first: whoever receives the dead letter then sees it counted.
	b.metrics.deadLetters.Add(1)
	if pubErr := b.nc.PublishMsg(out); pubErr != nil {
		b.log.Error("publish dead letter", "subject", out.Subject, "err", pubErr)
	}
	if b.opts.OnDeadLetter != nil {
		b.opts.OnDeadLetter(d)
	}
}
