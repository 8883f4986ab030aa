package bus

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
)

// Source is a source attribute parsed once, so that it can be set on many
// signals without parsing it again. The sdk's SetSource runs url.Parse on
// every call, which is a good part of the cost of building a signal on a
// hot path (an agent emitting one signal per instruction). The zero
// Source is "no source": Fill leaves a signal's source alone.
type Source struct {
	ref types.URIRef
	err error
	set bool
}

// ParseSource parses s as the sdk's SetSource would and keeps the result,
// or the error SetSource would record. A plain absolute path such as
// "/agent/team-1/worker_2" — '/' followed by [A-Za-z0-9._~/-] — is what
// url.Parse would return for it, a URL whose Path is s, and is built
// without calling it; anything else goes through url.Parse.
func ParseSource(s string) Source {
	if isPlainPath(s) {
		return Source{ref: types.URIRef{URL: url.URL{Path: s}}, set: true}
	}
	u, err := url.Parse(s)
	if err != nil {
		return Source{err: err, set: true}
	}
	return Source{ref: types.URIRef{URL: *u}, set: true}
}

// Err returns the error SetSource would have recorded for the source, or
// nil.
func (s Source) Err() error { return s.err }

// URIRef returns the source as SetSource would store it in a CloudEvents
// 1.0 context, or the error it would have recorded.
func (s Source) URIRef() (types.URIRef, error) { return s.ref, s.err }

// isPlainPath reports whether url.Parse(s) is exactly url.URL{Path: s}: s
// starts with one '/' (two would start an authority) and holds only
// unreserved characters and '/', which url.Parse neither unescapes nor
// needs a RawPath for.
func isPlainPath(s string) bool {
	if len(s) == 0 || s[0] != '/' || len(s) > 1 && s[1] == '/' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '/':
		default:
			return false
		}
	}
	return true
}

// Fill lists the attributes FillSignal sets on a signal that lacks them.
// A zero field sets nothing.
type Fill struct {
	ID            string    // the id, when the signal has none
	Source        Source    // the source, when the signal has none
	Time          time.Time // the time, when the signal has none (or a zero one)
	CausationID   string    // the causationid extension, when absent
	CorrelationID string    // the correlationid extension, when absent
	TraceParent   string    // the traceparent extension, when absent
}

// FillSignal returns a copy of sig with f's attributes set where sig lacks
// them. The copy is the signal the sdk's own route would give —
// sig.Clone(), then SetID, SetSource, SetTime and SetExtension for each
// attribute to fill — down to which storage it shares with sig (none that
// a setter could change), at a fraction of the cost: one context, no URL
// parsing, no extension name checks. Emitting agents call it once per
// signal.
//
// ok is false, and the returned signal the zero Signal, when sig is
// outside what FillSignal reproduces exactly, so that the caller takes the
// sdk's route instead: a context that is not a CloudEvents 1.0
// *event.EventContextV1, recorded field errors, an id that is only white
// space, or a source that does not parse (Source.Err). Like sig.Clone, it
// panics on an extension value that is not a CloudEvents type, which the
// sdk's setters never store.
func FillSignal(sig Signal, f Fill) (out Signal, ok bool) {
	ec, isV1 := sig.Context.(*event.EventContextV1)
	if !isV1 || ec == nil || len(sig.FieldErrors) > 0 {
		return Signal{}, false
	}
	// One allocation for the context and its time. The copy shares
	// DataContentType and Subject with sig; setters replace those, never
	// modify them.
	blk := &filled{c: *ec}
	c := &blk.c
	if c.ID == "" && f.ID != "" {
		// SetID trims white space and refuses an id left empty.
		if c.ID = strings.TrimSpace(f.ID); c.ID == "" {
			return Signal{}, false
		}
	}
	if f.Source.set && !hasSource(c) {
		if f.Source.err != nil {
			return Signal{}, false
		}
		c.Source = f.Source.ref
	}
	switch {
	case (c.Time == nil || c.Time.IsZero()) && !f.Time.IsZero():
		blk.time.Time = f.Time
		c.Time = &blk.time
	case c.Time != nil:
		blk.time.Time = c.Time.Time
		c.Time = &blk.time
	}
	if c.DataSchema != nil {
		c.DataSchema = &types.URI{URL: c.DataSchema.URL}
	}
	c.Extensions = fillExtensions(ec.Extensions, f)
	out = Signal{Context: c, DataBase64: sig.DataBase64}
	if sig.DataEncoded != nil {
		out.DataEncoded = make([]byte, len(sig.DataEncoded))
		copy(out.DataEncoded, sig.DataEncoded)
	}
	if sig.FieldErrors != nil {
		out.FieldErrors = map[string]error{}
	}
	return out, true
}

// filled holds what FillSignal allocates for a signal.
type filled struct {
	c    event.EventContextV1
	time types.Timestamp
}

// NewJSONSignal returns a CloudEvents 1.0 signal of type signalType with
// data as its JSON data, and no id, source or time: the signal that
// event.New(SpecVersion), SetType and SetJSONData build, in one allocation
// instead of two when data is JSON already (a json.RawMessage or []byte,
// taken as is) or nil. Other data, and data that is not valid JSON, take
// SetJSONData's route, errors included.
func NewJSONSignal(signalType string, data any) (Signal, error) {
	var raw []byte
	switch d := data.(type) {
	case json.RawMessage:
		raw = d
	case []byte:
		raw = d
	}
	if data == nil || raw != nil && validJSON(raw) {
		blk := &newSignal{c: event.EventContextV1{Type: strings.TrimSpace(signalType)}}
		s := Signal{Context: &blk.c}
		if data != nil {
			blk.contentType = event.ApplicationJSON
			blk.c.DataContentType = &blk.contentType
			s.DataEncoded = raw
		}
		return s, nil
	}
	s := event.New(SpecVersion)
	s.SetType(signalType)
	if err := SetJSONData(&s, data); err != nil {
		return Signal{}, err
	}
	return s, nil
}

// newSignal holds what NewJSONSignal allocates.
type newSignal struct {
	c           event.EventContextV1
	contentType string
}

// HasSource reports whether s has a source, as s.Source() != "" does,
// without building the source's string when the signal has none.
func HasSource(s *Signal) bool {
	if ec, ok := s.Context.(*event.EventContextV1); ok && ec != nil {
		return hasSource(ec)
	}
	return s.Source() != ""
}

// SourceString returns s.Source() without building the string when the
// source is a plain absolute path, as every agent's is ("/agent/<id>"):
// the sdk's getter runs url.URL.String, an allocation for each signal
// encoded for NATS. Any other shape takes the getter.
func SourceString(s *Signal) string {
	if ec, ok := s.Context.(*event.EventContextV1); ok && ec != nil && isPlainURLPath(&ec.Source.URL) {
		return ec.Source.URL.Path
	}
	return s.Source()
}

// isPlainURLPath reports whether u.String() is u.Path: a URL with a plain
// absolute path (isPlainPath) and nothing else.
func isPlainURLPath(u *url.URL) bool {
	return u.Scheme == "" && u.Opaque == "" && u.User == nil && u.Host == "" && u.RawPath == "" &&
		!u.ForceQuery && u.RawQuery == "" && u.Fragment == "" && isPlainPath(u.Path)
}

func hasSource(ec *event.EventContextV1) bool {
	// URIRef.String builds a string; the zero URL is empty without it, and
	// nearly every other source is surely not empty.
	return ec.Source.URL != (url.URL{}) && (surelySource(ec) || ec.Source.String() != "")
}

// fillExtensions copies ext (as Clone does, value by value) and adds the
// causation and correlation ids and the trace context that f sets and ext
// lacks.
func fillExtensions(ext map[string]any, f Fill) map[string]any {
	adds := [...]struct{ name, value string }{
		{ExtCausationID, f.CausationID},
		{ExtCorrelationID, f.CorrelationID},
		{ExtTraceParent, f.TraceParent},
	}
	n := len(ext)
	for i, a := range adds {
		if _, has := ext[a.name]; has || a.value == "" {
			adds[i].value = "" // nothing to add
			continue
		}
		n++
	}
	if ext == nil && n == 0 {
		return nil
	}
	out := make(map[string]any, n)
	for k, v := range ext {
		out[k] = types.Clone(v)
	}
	for _, a := range adds {
		if a.value != "" {
			out[a.name] = a.value
		}
	}
	return out
}
