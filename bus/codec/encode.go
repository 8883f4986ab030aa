package codec

import (
	"fmt"

	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// Mode is a content mode of the CloudEvents NATS binding.
type Mode int

const (
	// Binary puts attributes in ce- headers and the data in the body: the
	// body stays the payload, so plain NATS consumers can read it as is.
	Binary Mode = iota
	// Structured puts the whole event, as JSON, in the body.
	Structured
)

func (m Mode) String() string {
	switch m {
	case Binary:
		return "binary"
	case Structured:
		return "structured"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Header names of the binding.
const (
	headerPrefix      = "ce-"
	HeaderContentType = "content-type"
	// ContentTypeStructured marks a structured-mode message.
	ContentTypeStructured = "application/cloudevents+json"
)

// Encode writes s as a NATS message on subject in the given mode. It does
// not validate s; callers hold signals that bus.ValidateSignal accepted.
// The message shares s's data bytes in binary mode; neither may be modified
// while the other is in use.
func Encode(subject string, s *bus.Signal, mode Mode) (*nats.Msg, error) {
	msg := &nats.Msg{Subject: subject, Header: nats.Header{}}
	if mode == Structured {
		body, err := s.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode signal %s as structured JSON: %w", s.ID(), err)
		}
		msg.Header[HeaderContentType] = []string{ContentTypeStructured}
		msg.Data = body
		return msg, nil
	}
	set := func(name, value string) {
		if value != "" {
			msg.Header[headerPrefix+name] = []string{percentEncode(value)}
		}
	}
	set("specversion", s.SpecVersion())
	set("id", s.ID())
	set("source", s.Source())
	set("type", s.Type())
	set("subject", s.Subject())
	set("dataschema", s.DataSchema())
	if t := s.Time(); !t.IsZero() {
		set("time", types.FormatTime(t))
	}
	if ct := s.DataContentType(); ct != "" {
		set("datacontenttype", ct)
		msg.Header[HeaderContentType] = []string{ct}
	}
	for name, v := range s.Extensions() {
		str, err := types.Format(v)
		if err != nil {
			return nil, fmt.Errorf("encode extension %q of signal %s: %w", name, s.ID(), err)
		}
		set(name, str)
	}
	msg.Data = s.Data()
	return msg, nil
}
