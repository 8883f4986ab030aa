package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
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
// while the other is in use. A caller that publishes signal after signal
// encodes them into one Message instead (EncodeInto).
func Encode(subject string, s *bus.Signal, mode Mode) (*nats.Msg, error) {
	m := &Message{Msg: nats.Msg{Subject: subject}}
	n := 1 // content-type
	if mode != Structured {
		n = binaryAttrs + len(extensionsOf(s))
	}
	m.Msg.Header = make(nats.Header, n)
	m.vals = make([]string, 0, n)
	if err := encode(m, s, mode); err != nil {
		return nil, err
	}
	return &m.Msg, nil
}

// binaryAttrs is the most headers binary mode writes besides the
// extensions: the attributes and content-type.
const binaryAttrs = 9

// encode writes s into m, whose header map is empty.
func encode(m *Message, s *bus.Signal, mode Mode) error {
	if mode == Structured {
		body, err := structuredJSON(s)
		if err != nil {
			return fmt.Errorf("encode signal %s as structured JSON: %w", s.ID(), err)
		}
		m.Set(HeaderContentType, ContentTypeStructured)
		m.Msg.Data = body
		return nil
	}
	// Every signal an agent emits comes through here: the header's values
	// share one array, and the extensions are read in place.
	set := func(name, value string) {
		if value != "" {
			m.Set(name, percentEncode(value))
		}
	}
	set(headerPrefix+"specversion", s.SpecVersion())
	set(headerPrefix+"id", s.ID())
	set(headerPrefix+"source", bus.SourceString(s))
	set(headerPrefix+"type", s.Type())
	set(headerPrefix+"subject", s.Subject())
	set(headerPrefix+"dataschema", s.DataSchema())
	if t := s.Time(); !t.IsZero() {
		set(headerPrefix+"time", types.FormatTime(t))
	}
	if ct := s.DataContentType(); ct != "" {
		set(headerPrefix+"datacontenttype", ct)
		m.Set(HeaderContentType, ct) // a header of its own, not the binding's: as it is
	}
	for name, v := range extensionsOf(s) {
		str, err := types.Format(v)
		if err != nil {
			return fmt.Errorf("encode extension %q of signal %s: %w", name, s.ID(), err)
		}
		// Written even when empty: an extension that is present holds a
		// value, "" included, and a reader must see it as the log has it.
		m.Set(extensionHeader(name), percentEncode(str))
	}
	m.Msg.Data = s.Data()
	return nil
}

// extensionHeader is the header of the extension name; the names the
// runtime sets on every signal it derives are constants, not a string
// built per signal.
func extensionHeader(name string) string {
	switch name {
	case bus.ExtCausationID:
		return headerPrefix + bus.ExtCausationID
	case bus.ExtCorrelationID:
		return headerPrefix + bus.ExtCorrelationID
	case bus.ExtTraceParent:
		return headerPrefix + bus.ExtTraceParent
	}
	return headerPrefix + name
}

// extensionsOf returns s's extensions to read: a CloudEvents 1.0 context's
// own map, where Extensions() would copy it.
func extensionsOf(s *bus.Signal) map[string]any {
	if ec, ok := s.Context.(*event.EventContextV1); ok && ec != nil {
		return ec.Extensions
	}
	return s.Extensions()
}

// structuredJSON encodes s as a structured-mode body. sdk-go writes data
// raw when its content type is JSON (or absent) and as a JSON string
// otherwise, which breaks for data that is not valid JSON or not UTF-8; such
// data is written as data_base64 instead, so every signal round-trips.
func structuredJSON(s *bus.Signal) ([]byte, error) {
	if len(s.DataEncoded) == 0 || s.DataBase64 {
		return s.MarshalJSON()
	}
	mt, _, _ := strings.Cut(s.DataContentType(), ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	raw := false
	switch mt {
	case "", event.ApplicationJSON, event.TextJSON:
		// Whitespace around a JSON value is not part of the member a
		// reader gets back, so such data goes as base64 to stay exact.
		raw = json.Valid(s.DataEncoded) && len(bytes.TrimSpace(s.DataEncoded)) == len(s.DataEncoded)
	default:
		raw = strings.HasPrefix(mt, "text/") && utf8.Valid(s.DataEncoded)
	}
	if raw {
		return s.MarshalJSON()
	}
	c := *s
	c.DataBase64 = true
	return c.MarshalJSON()
}
