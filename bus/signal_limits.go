package bus

import (
	"net/url"

	"github.com/cloudevents/sdk-go/v2/event"
)

// DefaultMaxDataBytes is the default limit on the size of a signal's data.
const DefaultMaxDataBytes = 1 << 20

// DefaultMaxAttributeBytes is the default limit on the size of a signal's
// attributes, as AttributeBytes counts them.
const DefaultMaxAttributeBytes = 64 << 10

// inputShare is the part of the attribute limit a signal arriving from
// outside may take (see Limits.InputAttributeBytes).
const inputShare = 4

// Limits bound what a signal may carry. They are the one source of the
// numbers: the event log refuses an entry over them (through
// ValidateSignal) and the doors — the NATS codec, the control plane —
// refuse an input over them (through ValidateInput) before anything is
// acknowledged, so an input the door took never fails the commit batch
// it lands in. The zero value applies the defaults.
type Limits struct {
	// MaxDataBytes is the largest data payload accepted, in bytes. Zero means
	// DefaultMaxDataBytes; a negative value means no limit.
	MaxDataBytes int
	// MaxAttributeBytes is the largest size of a signal's attributes
	// (everything but its data, as AttributeBytes counts it) a log entry
	// may have, in bytes. Zero means DefaultMaxAttributeBytes; a negative
	// value means no limit.
	MaxAttributeBytes int
}

func (l Limits) maxData() int {
	if l.MaxDataBytes == 0 {
		return DefaultMaxDataBytes
	}
	return l.MaxDataBytes
}

func (l Limits) maxAttributes() int {
	if l.MaxAttributeBytes == 0 {
		return DefaultMaxAttributeBytes
	}
	return l.MaxAttributeBytes
}

// DataLimit is the largest data payload the limits allow, in bytes, with
// the default applied; negative means no limit.
func (l Limits) DataLimit() int { return l.maxData() }

// AttributeLimit is the largest size of a log entry's attributes the
// limits allow, in bytes, with the default applied; negative means no
// limit.
func (l Limits) AttributeLimit() int { return l.maxAttributes() }

// InputAttributeBytes is the largest size of the attributes of a signal
// that comes in from outside: a quarter of the log's limit, or -1 for no
// limit. The rest is room for the entries the runtime derives from an
// input, which repeat its id and source in their own attributes — a cmd
// record's id is "cmd:"+source+"#"+id, a signal an agent emits in reply
// carries an id derived from the input's, the input's id as causationid
// and its correlationid — and must fit the log's limit too.
func (l Limits) InputAttributeBytes() int {
	max := l.maxAttributes()
	if max < 0 {
		return -1
	}
	return max / inputShare
}

// ValidateInput is ValidateSignal for a signal arriving from outside: its
// attributes must also fit InputAttributeBytes.
func ValidateInput(s *Signal, lim Limits) error {
	return validate(s, lim, lim.InputAttributeBytes(), " for an input (a quarter of the log's, leaving room for what the runtime derives from it)")
}

// AttributeBytes returns the size of s's attributes, the measure
// Limits.MaxAttributeBytes bounds: the bytes of each attribute's value in
// its string form (id, source, type, subject, datacontenttype,
// dataschema), 8 for a time (as the log stores it), and each extension's
// name and value. It does not count the data.
func AttributeBytes(s *Signal) int {
	n, _ := attributeBytes(s, false)
	return n
}

// attributeBytes counts s's attributes and, when check is set, checks
// that each is a CloudEvents string on the way (see checkAttributes).
func attributeBytes(s *Signal, check bool) (int, error) {
	ec, ok := s.Context.(*event.EventContextV1)
	if !ok || ec == nil {
		return genericAttributeBytes(s, check)
	}
	n := 0
	add := func(name, v string) error {
		n += len(v)
		if check {
			return checkText(name, v)
		}
		return nil
	}
	if err := add("id", ec.ID); err != nil {
		return 0, err
	}
	m, err := uriBytes("source", &ec.Source.URL, check)
	if err != nil {
		return 0, err
	}
	n += m
	if err := add("type", ec.Type); err != nil {
		return 0, err
	}
	if ec.Subject != nil {
		if err := add("subject", *ec.Subject); err != nil {
			return 0, err
		}
	}
	if ec.DataContentType != nil {
		if err := add("datacontenttype", *ec.DataContentType); err != nil {
			return 0, err
		}
	}
	if ec.DataSchema != nil {
		m, err := uriBytes("dataschema", &ec.DataSchema.URL, check)
		if err != nil {
			return 0, err
		}
		n += m
	}
	if ec.Time != nil && !ec.Time.IsZero() {
		n += 8
		if check {
			if err := checkTime(ec.Time.Time); err != nil {
				return 0, err
			}
		}
	}
	m, err = extensionBytes(ec.Extensions, check)
	return n + m, err
}

// genericAttributeBytes counts through the sdk's getters, for a context
// that is not a CloudEvents 1.0 one (which ValidateSignal refuses first).
func genericAttributeBytes(s *Signal, check bool) (int, error) {
	n := 0
	for _, a := range [...]struct{ name, v string }{
		{"id", s.ID()}, {"source", s.Source()}, {"type", s.Type()}, {"subject", s.Subject()},
		{"datacontenttype", s.DataContentType()}, {"dataschema", s.DataSchema()},
	} {
		n += len(a.v)
		if check {
			if err := checkText(a.name, a.v); err != nil {
				return 0, err
			}
		}
	}
	if t := s.Time(); !t.IsZero() {
		n += 8
		if check {
			if err := checkTime(t); err != nil {
				return 0, err
			}
		}
	}
	m, err := extensionBytes(s.Extensions(), check)
	return n + m, err
}

// uriBytes returns the length of u's string form and checks it, without
// building it for the two shapes nearly every source has: a plain
// absolute path ("/agent/c1") and scheme:opaque ("jido-bus:runtime"),
// which url.URL.String writes as they are.
func uriBytes(name string, u *url.URL, check bool) (int, error) {
	switch {
	case isPlainURLPath(u):
		return len(u.Path), nil
	case u.Scheme != "" && u.Opaque != "" && u.User == nil && u.Host == "" && u.Path == "" &&
		!u.ForceQuery && u.RawQuery == "" && u.Fragment == "":
		if check {
			if err := checkText(name, u.Scheme); err != nil {
				return 0, err
			}
			if err := checkText(name, u.Opaque); err != nil {
				return 0, err
			}
		}
		return len(u.Scheme) + 1 + len(u.Opaque), nil
	}
	v := u.String()
	if check {
		if err := checkText(name, v); err != nil {
			return 0, err
		}
	}
	return len(v), nil
}
