package bus

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/oklog/ulid/v2"
)

// Signal is a CloudEvents 1.0 event, the sdk-go type itself, so Go users
// need no new type and any CloudEvents tool reads what jido-bus writes.
type Signal = event.Event

// SpecVersion is the only CloudEvents version jido-bus speaks. "1.0.2" (a
// patch release of the same spec) is accepted on input and normalised to it.
const SpecVersion = "1.0"

// Extension attributes jido-bus reads and writes. CloudEvents extension
// names are lower-case letters and digits only.
const (
	ExtCausationID   = "causationid"   // the id of the signal this one answers
	ExtCorrelationID = "correlationid" // the id shared by a whole conversation of signals
	ExtTraceParent   = "traceparent"   // W3C trace context
)

// ValidateSignal checks what jido-bus requires of every signal, wherever
// it comes from (a codec, the Go API, an agent's directive) and before the
// log stores it: the required attributes (id, source, type, specversion
// 1.0), the type grammar, every attribute a CloudEvents string (valid
// UTF-8 without control characters), extension names in lower-case
// letters and digits with values of a CloudEvents type, a time the log can
// store, attributes within lim.MaxAttributeBytes and data within
// lim.MaxDataBytes. The error is an *Error whose type is the Reason and
// whose message names the attribute. The log calls it with its own limits,
// so a signal it accepts under the same Limits the log accepts too.
func ValidateSignal(s *Signal, lim Limits) error {
	return validate(s, lim, lim.maxAttributes(), "")
}

func validate(s *Signal, lim Limits, maxAttr int, why string) error {
	if s.SpecVersion() != SpecVersion {
		if s.SpecVersion() == "" {
			return Errorf(ReasonMissingAttribute, "specversion is missing; set it to %q", SpecVersion)
		}
		return Errorf(ReasonInvalidSpecVersion, "specversion %q is not supported; use %q", s.SpecVersion(), SpecVersion)
	}
	if s.ID() == "" {
		return Errorf(ReasonMissingAttribute, "id is missing")
	}
	if !HasSource(s) {
		return Errorf(ReasonMissingAttribute, "source is missing")
	}
	if s.Type() == "" {
		return Errorf(ReasonMissingAttribute, "type is missing")
	}
	if err := ValidateType(s.Type()); err != nil {
		return err
	}
	n, err := checkAttributes(s)
	if err != nil {
		return err
	}
	if maxAttr > 0 && n > maxAttr {
		return Errorf(ReasonTooLarge, "attributes take %d bytes, the limit is %d%s", n, maxAttr, why)
	}
	if max := lim.maxData(); max > 0 && len(s.Data()) > max {
		return Errorf(ReasonTooLarge, "data is %d bytes, the limit is %d", len(s.Data()), max)
	}
	if surelyValid(s) {
		return nil
	}
	if err := s.Validate(); err != nil {
		return Errorf(ReasonInvalidAttribute, "%v", err)
	}
	return nil
}

// NewID returns a new ULID string: unique, and sortable by creation time. It
// reads the clock and crypto/rand, so the pure agent layer never calls it;
// it derives ids from the signal it handles instead.
func NewID() string {
	return ulid.MustNew(ulid.Now(), rand.Reader).String()
}

// NewSignal returns a valid signal of the given type and source with a new
// ULID id, the current time, and data encoded as JSON (data may be nil, or a
// json.RawMessage / []byte taken as JSON as is).
func NewSignal(signalType, source string, data any) (Signal, error) {
	s := event.New(SpecVersion)
	s.SetID(NewID())
	s.SetType(signalType)
	s.SetSource(source)
	s.SetTime(time.Now().UTC())
	if err := SetJSONData(&s, data); err != nil {
		return Signal{}, err
	}
	if err := ValidateSignal(&s, Limits{MaxDataBytes: -1, MaxAttributeBytes: -1}); err != nil {
		return Signal{}, err
	}
	return s, nil
}

// SetJSONData sets s's data to v encoded as JSON and its datacontenttype to
// application/json. nil clears the data. A json.RawMessage or []byte is
// taken to be JSON already and is checked, not re-encoded.
func SetJSONData(s *Signal, v any) error {
	var raw []byte
	switch d := v.(type) {
	case nil:
		s.DataEncoded = nil
		s.SetDataContentType("")
		return nil
	case json.RawMessage:
		raw = d
	case []byte:
		raw = d
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode data of %s signal: %w", s.Type(), err)
		}
		raw = b
	}
	if !json.Valid(raw) {
		return Errorf(ReasonMalformed, "data of %s signal is not valid JSON", s.Type())
	}
	s.DataEncoded = raw
	s.SetDataContentType(event.ApplicationJSON)
	return nil
}
