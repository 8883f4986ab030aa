package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/jsonenc"
)

// DirectiveCodec encodes directives to their log form and back. The log
// form of a directive is a JSON object whose "kind" member names the type
// and whose other members are the type's fields:
//
//	{"kind":"emit","signal":{"specversion":"1.0","id":"s1.0",…}}
//	{"kind":"error","error":{"type":"no_route","message":"…"},"context":"routing"}
//
// A codec knows the built-in kinds from the start; third-party directive
// types are added with Register or RegisterDirective, once, at program
// start. The runtime owns the codec it uses; there is no global one.
//
// Encoding is deterministic (struct fields in declaration order, map keys
// sorted), so a directive encodes to the same bytes every time; that is
// what lets replay compare directives byte for byte. Kinds may be added but
// an existing kind's form only ever gains optional members.
//
// Registering is not safe concurrently with anything else; encoding and
// decoding are safe for concurrent use.
type DirectiveCodec struct {
	decoders map[string]func([]byte) (Directive, error)
	// builtin says the built-in kinds are registered (NewDirectiveCodec),
	// so their values are encoded by appendLogForm.
	builtin bool
}

// NewDirectiveCodec returns a codec that knows the built-in directive kinds.
func NewDirectiveCodec() *DirectiveCodec {
	c := &DirectiveCodec{decoders: make(map[string]func([]byte) (Directive, error))}
	mustRegister[Emit](c)
	mustRegister[Error](c)
	mustRegister[SpawnAgent](c)
	mustRegister[StopChild](c)
	mustRegister[Schedule](c)
	mustRegister[ScheduleCancel](c)
	mustRegister[Cron](c)
	mustRegister[CronCancel](c)
	mustRegister[RunInstruction](c)
	mustRegister[Stop](c)
	c.builtin = true
	return c
}

func mustRegister[D Directive](c *DirectiveCodec) {
	if err := RegisterDirective[D](c); err != nil {
		panic(err) // the built-in types are fixed; this cannot fail at run time
	}
}

// RegisterDirective registers D, a type whose value's JSON (encoding/json)
// is its log form minus "kind". D must not have a JSON member named "kind".
func RegisterDirective[D Directive](c *DirectiveCodec) error {
	var zero D
	kind := zero.DirectiveKind()
	if b, err := json.Marshal(zero); err == nil {
		var members map[string]json.RawMessage
		if json.Unmarshal(b, &members) == nil {
			if _, clash := members["kind"]; clash {
				return fmt.Errorf("directive %s: type %T has a JSON member named \"kind\", which the log form reserves", kind, zero)
			}
		}
	}
	return c.Register(kind, func(data []byte) (Directive, error) {
		var d D
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		if v, ok := any(d).(logFormChecker); ok {
			if err := v.checkLogForm(); err != nil {
				return nil, err
			}
		}
		return d, nil
	})
}

// logFormChecker is implemented by built-in directives whose members JSON
// alone does not check: a signal must be a valid signal, or what was read
// could not be written back.
type logFormChecker interface{ checkLogForm() error }

func checkLogSignal(s *bus.Signal) error {
	return bus.ValidateSignal(s, bus.Limits{MaxDataBytes: -1})
}

func (e Emit) checkLogForm() error     { return checkLogSignal(&e.Signal) }
func (s Schedule) checkLogForm() error { return checkLogSignal(&s.Signal) }
func (c Cron) checkLogForm() error {
	if c.Signal == nil {
		return nil
	}
	return checkLogSignal(c.Signal)
}

// Register registers the decoder of kind. decode receives the whole log
// form ("kind" included) and returns the directive; the directive's own
// JSON (without "kind") is its encoding. A kind registered twice is an
// error, and so is a kind that is not lower_snake_case.
func (c *DirectiveCodec) Register(kind string, decode func(data []byte) (Directive, error)) error {
	if !isKindWord(kind) {
		return fmt.Errorf("directive kind %q: want lower_snake_case", kind)
	}
	if _, dup := c.decoders[kind]; dup {
		return fmt.Errorf("directive kind %q is already registered", kind)
	}
	c.decoders[kind] = decode
	return nil
}

// Kinds returns the registered kinds, sorted.
func (c *DirectiveCodec) Kinds() []string { return slices.Sorted(maps.Keys(c.decoders)) }

func isKindWord(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

// Encode returns d's log form. A directive of an unregistered kind is an
// error, so that everything written can be read back; an UnknownDirective
// encodes to the bytes it was decoded from.
func (c *DirectiveCodec) Encode(d Directive) ([]byte, error) {
	return c.appendEncoded(nil, d)
}

// appendEncoded appends d's log form (Encode) to b.
func (c *DirectiveCodec) appendEncoded(b []byte, d Directive) ([]byte, error) {
	if c.builtin {
		if out, ok := appendLogForm(b, d); ok {
			return out, nil
		}
	}
	if a, ok := d.(LogFormAppender); ok {
		kind := d.DirectiveKind()
		if _, registered := c.decoders[kind]; registered {
			out := append(b, `{"kind":`...)
			if out, ok = a.AppendLogForm(jsonenc.AppendString(out, kind)); ok {
				return append(out, '}'), nil
			}
		}
	}
	out, err := c.appendJSON(b, d)
	if err != nil {
		return b, err
	}
	return out, nil
}

// LogFormAppender is implemented by a directive type of another package
// that writes its own log form without reflection, as the built-in ones
// do: the conversation loop's, written on every step of a conversation.
// AppendLogForm appends to b the members of d's JSON after "kind", each
// preceded by a comma (nothing for a type without members), exactly as
// encoding/json writes them for the value — AppendSignalJSON writes a
// signal so, and json.Marshal of a string or a json.RawMessage gives the
// exact bytes of one — or reports false, when it cannot write the value exactly, to have
// encoding/json write it; b's contents past its length are then
// unspecified. Its package should hold the two to the same bytes in a
// test.
type LogFormAppender interface {
	Directive
	AppendLogForm(b []byte) ([]byte, bool)
}

// encodeJSON is Encode through encoding/json, the path of every kind
// appendLogForm does not write.
func (c *DirectiveCodec) encodeJSON(d Directive) ([]byte, error) {
	out, err := c.appendJSON(nil, d)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendJSON appends d's log form through encoding/json to b: the
// directive's JSON with the kind spliced in front, written into b rather
// than into buffers of its own.
func (c *DirectiveCodec) appendJSON(b []byte, d Directive) ([]byte, error) {
	if u, ok := d.(UnknownDirective); ok {
		var buf bytes.Buffer
		if err := json.Compact(&buf, u.Raw); err != nil {
			return nil, fmt.Errorf("directive %s: %w", u.Kind, err)
		}
		return append(b, buf.Bytes()...), nil
	}
	if d == nil {
		return nil, fmt.Errorf("encode directive: nil")
	}
	kind := d.DirectiveKind()
	if _, ok := c.decoders[kind]; !ok {
		return nil, fmt.Errorf("encode directive %T: kind %q is not registered", d, kind)
	}
	body, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode directive %s: %w", kind, err)
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("encode directive %s: %T encodes to %.20s…, want a JSON object", kind, d, body)
	}
	b = append(b, `{"kind":`...)
	b = jsonenc.AppendString(b, kind)
	if len(body) > 2 {
		b = append(b, ',')
	}
	return append(b, body[1:]...), nil
}

// Decode reads a log form. A kind this codec does not know decodes to an
// UnknownDirective that keeps the bytes, so a log written by a binary with
// more directive types can still be read and rewritten; input that is not
// an object with a string "kind", or a known kind whose members do not fit
// its type, is an error.
func (c *DirectiveCodec) Decode(data []byte) (Directive, error) {
	var head struct {
		Kind *string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode directive: %w", err)
	}
	if head.Kind == nil || *head.Kind == "" {
		return nil, fmt.Errorf("decode directive: no \"kind\" member")
	}
	dec, ok := c.decoders[*head.Kind]
	if !ok {
		var b bytes.Buffer
		if err := json.Compact(&b, data); err != nil {
			return nil, fmt.Errorf("decode directive %s: %w", *head.Kind, err)
		}
		return UnknownDirective{Kind: *head.Kind, Raw: b.Bytes()}, nil
	}
	d, err := dec(data)
	if err != nil {
		return nil, fmt.Errorf("decode directive %s: %w", *head.Kind, err)
	}
	return d, nil
}

// EncodeAll returns the log form of ds as a JSON array.
func (c *DirectiveCodec) EncodeAll(ds []Directive) ([]byte, error) {
	out, err := c.AppendAll(make([]byte, 0, 64+256*len(ds)), ds)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendAll appends the log form of ds, the JSON array EncodeAll returns,
// to dst — for a caller that writes it inside a record of its own, such
// as the runtime's cmd record, without a buffer in between.
func (c *DirectiveCodec) AppendAll(dst []byte, ds []Directive) ([]byte, error) {
	out := append(dst, '[')
	for i, d := range ds {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = c.appendEncoded(out, d); err != nil {
			return dst, fmt.Errorf("directive %d: %w", i, err)
		}
	}
	return append(out, ']'), nil
}

// DecodeAll reads a JSON array written by EncodeAll.
func (c *DirectiveCodec) DecodeAll(data []byte) ([]Directive, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("decode directives: %w", err)
	}
	out := make([]Directive, len(raws))
	for i, r := range raws {
		d, err := c.Decode(r)
		if err != nil {
			return nil, fmt.Errorf("directive %d: %w", i, err)
		}
		out[i] = d
	}
	return out, nil
}

// UnknownDirective is a directive of a kind the codec has no type for. It
// keeps the log form so it can be written back unchanged; the runtime
// records it as not executable instead of failing.
type UnknownDirective struct {
	Kind string
	Raw  json.RawMessage
}

func (u UnknownDirective) DirectiveKind() string { return u.Kind }
