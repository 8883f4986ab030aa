package codec

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

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
// validates it with bus.ValidateInput, and returns it with the mode it
// found. subjectType is the signal type the subject names ("" when it names
// none): a plain message takes its type from it, and a ce-type (or a
// structured type) that disagrees with it is refused with ReasonTypeMismatch.
// A binary message without ce-type takes the subject's type.
//
// Errors are *bus.Error values naming what is wrong; Decode never panics.
func (d *Decoder) Decode(msg *nats.Msg, subjectType string) (bus.Signal, Mode, error) {
	max := d.Limits.DataLimit()
	var extBuf [4]header // see readAttrHeaders
	attrs, ext, attrErr := readAttrHeaders(msg.Header, extBuf[:0])
	if attrs.contentTypes > 1 {
		return bus.Signal{}, Binary, bus.Errorf(bus.ReasonMalformed, "header %s is sent more than once; send one", HeaderContentType)
	}
	ct := attrs.contentType
	if isStructured(ct) {
		if limit := structuredLimit(max, d.Limits.InputAttributeBytes()); limit > 0 && len(msg.Data) > limit {
			return bus.Signal{}, Structured, bus.Errorf(bus.ReasonTooLarge, "structured body is %d bytes, more than data of %d bytes and attributes within the limits take", len(msg.Data), max)
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
	s, found, err := decodeBinary(msg, &attrs, ext, attrErr, ct, d.Limits.InputAttributeBytes())
	if err != nil {
		return bus.Signal{}, Binary, err
	}
	if !found {
		s = d.plain(msg, ct, subjectType)
	} else if s.Type() == "" && subjectType != "" {
		s.SetType(subjectType)
	}
	return s, Binary, d.check(&s, subjectType)
}

// structuredLimit is the largest structured body worth reading under the
// data limit and the input attribute limit: data written as base64 grows
// by a third, and JSON may escape an attribute's characters (up to six
// bytes each); 0 means no limit.
func structuredLimit(maxData, maxAttr int) int {
	if maxData < 0 || maxAttr < 0 {
		return 0
	}
	return 4*(maxData/3+1) + 6*maxAttr + 1<<10
}

func (d *Decoder) check(s *bus.Signal, subjectType string) error {
	// The size first: a refusal of a 70 KB attribute must not quote it.
	if max := d.Limits.InputAttributeBytes(); max > 0 {
		if n := bus.AttributeBytes(s); n > max {
			return bus.Errorf(bus.ReasonTooLarge, "attributes take %d bytes, the limit for an input is %d", n, max)
		}
	}
	if s.Type() != "" {
		if err := bus.ValidateType(s.Type()); err != nil {
			return err
		}
	}
	if subjectType != "" && s.Type() != "" && s.Type() != subjectType {
		return bus.Errorf(bus.ReasonTypeMismatch, "the signal's type %q disagrees with the subject's %q", s.Type(), subjectType)
	}
	return bus.ValidateInput(s, d.Limits)
}

// plain builds the signal of a message that carries no CloudEvents
// attributes at all, as the NATS CLI's `nats pub SUBJECT BODY` sends it.
func (d *Decoder) plain(msg *nats.Msg, ct, subjectType string) bus.Signal {
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

// decodeBinary reads the ce- headers of msg, as readAttrHeaders found
// them (a, ext, and its error); contentType is its content-type header,
// the data's type when no ce-datacontenttype says it. found is false when
// msg has none, which makes it a plain message.
// Every value is checked as a CloudEvents string once percent-decoded, and
// the error names the header it came in. maxAttr is the input attribute
// limit (negative for none): headers far over it are refused before they
// are decoded one by one.
func decodeBinary(msg *nats.Msg, a *attrHeaders, ext []header, err error, contentType string, maxAttr int) (s bus.Signal, found bool, _ error) {
	if !a.found || err != nil {
		return s, a.found, err
	}
	// A percent-encoded value is at most three times its decoded length.
	if maxAttr > 0 && a.rawBytes > 3*maxAttr {
		return s, true, bus.Errorf(bus.ReasonTooLarge, "attribute headers take %d bytes, beyond the input limit of %d bytes of attributes", a.rawBytes, maxAttr)
	}
	var vals [numAttrs]string
	for i, h := range a.known {
		if h.key == "" {
			continue
		}
		if vals[i], err = headerValue(h); err != nil {
			return s, true, err
		}
	}
	switch normalizeSpecVersion(vals[attrSpecVersion]) {
	case bus.SpecVersion:
	case "":
		return s, true, bus.Errorf(bus.ReasonMissingAttribute, "header ce-specversion is missing; set it to %q", bus.SpecVersion)
	default:
		return s, true, bus.Errorf(bus.ReasonInvalidSpecVersion, "ce-specversion %q is not supported; use %q", bus.Excerpt(vals[attrSpecVersion]), bus.SpecVersion)
	}
	if vals[attrID] == "" {
		return s, true, bus.Errorf(bus.ReasonMissingAttribute, "header ce-id is missing")
	}
	if vals[attrSource] == "" {
		return s, true, bus.Errorf(bus.ReasonMissingAttribute, "header ce-source is missing")
	}
	source, perr := bus.ParseSource(vals[attrSource]).URIRef()
	if perr != nil {
		return s, true, bus.Errorf(bus.ReasonInvalidAttribute, "header %s: %q is not a URI reference", a.known[attrSource].key, bus.Excerpt(vals[attrSource]))
	}
	var t time.Time
	if h := a.known[attrTime]; h.key != "" {
		if t, perr = types.ParseTime(vals[attrTime]); perr != nil {
			return s, true, bus.Errorf(bus.ReasonInvalidAttribute, "header %s: time %q is not RFC 3339", h.key, bus.Excerpt(vals[attrTime]))
		}
	}
	// The signal event.New and the sdk's setters would build — each
	// setter's trimming and nil for an empty value included — with its
	// context, subject, content type and time in one allocation instead
	// of five, and the source parsed once (bus.ParseSource builds an
	// agent's plain path without url.Parse): every cast an agent receives
	// is decoded here.
	blk := &decoded{}
	c := &blk.c
	s = bus.Signal{Context: c}
	if c.ID = strings.TrimSpace(vals[attrID]); c.ID == "" {
		s.SetID(vals[attrID]) // records the sdk's error: the id is only white space
	}
	c.Source = source
	if v := vals[attrType]; v != "" {
		c.Type = strings.TrimSpace(v)
	}
	if h := a.known[attrSubject]; h.key != "" {
		if blk.subject = strings.TrimSpace(vals[attrSubject]); blk.subject != "" {
			c.Subject = &blk.subject
		}
	}
	if h := a.known[attrDataSchema]; h.key != "" {
		s.SetDataSchema(vals[attrDataSchema])
	}
	if !t.IsZero() {
		blk.time.Time = t
		c.Time = &blk.time
	}
	for _, h := range ext {
		if !bus.ValidExtensionName(h.name) {
			return s, true, bus.Errorf(bus.ReasonInvalidAttribute, "header %s: extension names are letters and digits only", bus.Excerpt(h.key))
		}
		v, err := headerValue(h)
		if err != nil {
			return s, true, err
		}
		s.SetExtension(h.name, v)
	}
	if h := a.known[attrDataContentType]; h.key != "" {
		contentType = vals[attrDataContentType]
	}
	if len(msg.Data) > 0 {
		if blk.contentType = strings.TrimSpace(contentType); blk.contentType != "" {
			c.DataContentType = &blk.contentType
		}
		s.DataEncoded = msg.Data
	}
	return s, true, nil
}

// decoded holds what decodeBinary allocates for a signal.
type decoded struct {
	c           event.EventContextV1
	subject     string
	contentType string
	time        types.Timestamp
}

// headerValue percent-decodes h's value and checks it is a CloudEvents
// string.
func headerValue(h header) (string, error) {
	v := percentDecode(h.value)
	if err := bus.CheckAttributeText(h.name, v); err != nil {
		return "", fmt.Errorf("header %s: %w", bus.Excerpt(h.key), err)
	}
	return v, nil
}

// normalizeSpecVersion maps the patch release "1.0.2" to "1.0".
func normalizeSpecVersion(v string) string {
	if v == "1.0.2" {
		return bus.SpecVersion
	}
	return v
}
