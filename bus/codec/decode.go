package codec

import (
	"bytes"
	"net/url"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// structuredOverhead is how much larger than the data limit a structured
// body may be before it is refused unread: room for the attributes.
const structuredOverhead = 64 << 10

// Decoder reads signals from NATS messages. The zero value is ready to use
// with the default limits and the real clock. A Decoder is safe for
// concurrent use.
type Decoder struct {
	Limits bus.Limits
	// NewID and Now supply the id and time of plain messages; nil means
	// bus.NewID and time.Now.
	NewID func() string
	Now   func() time.Time
}

// Decode reads the signal carried by msg in whichever mode it was written,
// validates it with bus.ValidateSignal, and returns it with the mode it
// found. subjectType is the signal type the subject names ("" when it names
// none): a plain message takes its type from it, and a ce-type (or a
// structured type) that disagrees with it is refused with ReasonTypeMismatch.
// A binary message without ce-type takes the subject's type.
//
// Errors are *bus.Error values naming what is wrong; Decode never panics.
func (d *Decoder) Decode(msg *nats.Msg, subjectType string) (bus.Signal, Mode, error) {
	max := d.Limits.MaxDataBytes
	if max == 0 {
		max = bus.DefaultMaxDataBytes
	}
	if ct := headerFold(msg.Header, HeaderContentType); isStructured(ct) {
		if max > 0 && len(msg.Data) > max+structuredOverhead {
			return bus.Signal{}, Structured, bus.Errorf(bus.ReasonTooLarge, "structured body is %d bytes, the data limit is %d", len(msg.Data), max)
		}
		s, err := decodeStructured(msg.Data)
		if err != nil {
			return bus.Signal{}, Structured, err
		}
		return s, Structured, d.check(&s, subjectType)
	}
	if max > 0 && len(msg.Data) > max {
		return bus.Signal{}, Binary, bus.Errorf(bus.ReasonTooLarge, "data is %d bytes, the limit is %d", len(msg.Data), max)
	}
	s, found, err := decodeBinary(msg)
	if err != nil {
		return bus.Signal{}, Binary, err
	}
	if !found {
		s = d.plain(msg, subjectType)
	} else if s.Type() == "" && subjectType != "" {
		s.SetType(subjectType)
	}
	return s, Binary, d.check(&s, subjectType)
}

func (d *Decoder) check(s *bus.Signal, subjectType string) error {
	if s.Type() != "" {
		if err := bus.ValidateType(s.Type()); err != nil {
			return err
		}
	}
	if subjectType != "" && s.Type() != "" && s.Type() != subjectType {
		return bus.Errorf(bus.ReasonTypeMismatch, "the signal's type %q disagrees with the subject's %q", s.Type(), subjectType)
	}
	return bus.ValidateSignal(s, d.Limits)
}

// plain builds the signal of a message that carries no CloudEvents
// attributes at all, as the NATS CLI's `nats pub SUBJECT BODY` sends it.
func (d *Decoder) plain(msg *nats.Msg, subjectType string) bus.Signal {
	s := event.New(bus.SpecVersion)
	newID, now := d.NewID, d.Now
	if newID == nil {
		newID = bus.NewID
	}
	if now == nil {
		now = time.Now
	}
	s.SetID(newID())
	s.SetSource("nats:" + msg.Subject)
	s.SetType(subjectType)
	s.SetTime(now().UTC())
	if len(msg.Data) > 0 {
		ct := headerFold(msg.Header, HeaderContentType)
		if ct == "" {
			ct = sniffContentType(msg.Data)
		}
		s.SetDataContentType(ct)
		s.DataEncoded = msg.Data
	}
	return s
}

func sniffContentType(data []byte) string {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && jsonValid(trimmed) {
		return event.ApplicationJSON
	}
	return "text/plain"
}

func isStructured(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), ContentTypeStructured)
}

// headerFold returns the first value of the header named name, compared
// without regard to case.
func headerFold(h nats.Header, name string) string {
	if v, ok := h[name]; ok && len(v) > 0 {
		return v[0]
	}
	for k, v := range h {
		if len(v) > 0 && strings.EqualFold(k, name) {
			return v[0]
		}
	}
	return ""
}

// decodeBinary reads the ce- headers of msg. found is false when msg has
// none, which makes it a plain message.
func decodeBinary(msg *nats.Msg) (s bus.Signal, found bool, err error) {
	s = event.New(bus.SpecVersion)
	var specVersion, contentType string
	for k, vals := range msg.Header {
		if len(vals) == 0 || len(k) <= len(headerPrefix) || !strings.EqualFold(k[:len(headerPrefix)], headerPrefix) {
			continue
		}
		found = true
		name := strings.ToLower(k[len(headerPrefix):])
		v := percentDecode(vals[0])
		switch name {
		case "specversion":
			specVersion = v
		case "id":
			s.SetID(v)
		case "source":
			if _, perr := url.Parse(v); perr != nil {
				return s, true, bus.Errorf(bus.ReasonInvalidAttribute, "header %s: %q is not a URI reference", k, v)
			}
			s.SetSource(v)
		case "type":
			s.SetType(v)
		case "subject":
			s.SetSubject(v)
		case "dataschema":
			s.SetDataSchema(v)
		case "datacontenttype":
			contentType = v
		case "time":
			t, perr := types.ParseTime(v)
			if perr != nil {
				return s, true, bus.Errorf(bus.ReasonInvalidAttribute, "header %s: time %q is not RFC 3339", k, v)
			}
			s.SetTime(t)
		default:
			if !event.IsExtensionNameValid(name) {
				return s, true, bus.Errorf(bus.ReasonInvalidAttribute, "header %s: extension names are letters and digits only", k)
			}
			s.SetExtension(name, v)
		}
	}
	if !found {
		return s, false, nil
	}
	switch normalizeSpecVersion(specVersion) {
	case bus.SpecVersion:
	case "":
		return s, true, bus.Errorf(bus.ReasonMissingAttribute, "header ce-specversion is missing; set it to %q", bus.SpecVersion)
	default:
		return s, true, bus.Errorf(bus.ReasonInvalidSpecVersion, "ce-specversion %q is not supported; use %q", specVersion, bus.SpecVersion)
	}
	if s.ID() == "" {
		return s, true, bus.Errorf(bus.ReasonMissingAttribute, "header ce-id is missing")
	}
	if s.Source() == "" {
		return s, true, bus.Errorf(bus.ReasonMissingAttribute, "header ce-source is missing")
	}
	if contentType == "" {
		contentType = headerFold(msg.Header, HeaderContentType)
	}
	if len(msg.Data) > 0 {
		if contentType != "" {
			s.SetDataContentType(contentType)
		}
		s.DataEncoded = msg.Data
	}
	return s, true, nil
}

// normalizeSpecVersion maps the patch release "1.0.2" to "1.0".
func normalizeSpecVersion(v string) string {
	if v == "1.0.2" {
		return bus.SpecVersion
	}
	return v
}
