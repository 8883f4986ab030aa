package agents

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// paramsPlan decodes the params of a Typed action without encoding/json,
// for the params that nearly every instruction carries: a flat JSON object
// of numbers, strings, booleans and nulls into a struct of such fields.
// It exists because json.Unmarshal (a validity scan, then a reflective
// decode) was the largest cost of a counter step after the signal.
//
// The plan is exact or silent: decode succeeds only where json.Unmarshal
// would succeed with the same result, and reports false for anything else
// — nested values, escapes, a value of the wrong type, an overflow, a
// syntax error — so that Typed runs json.Unmarshal, which gives the
// result or the error it always gave. A type the plan cannot mirror
// (embedded fields, ",string" options, unmarshalers, json.Number, other
// kinds, names that fold together) gets no plan at all.
type paramsPlan struct {
	fields []paramsField
	// pointers says that some field is a pointer. Without one a value is
	// decoded where it stands, which can be the stack.
	pointers bool
}

type paramsField struct {
	name  string       // the JSON member name, as encoding/json derives it
	index int          // the struct field's index
	ptr   bool         // the field is a pointer to a value of kind
	kind  reflect.Kind // of the field, or of what it points to
	elem  reflect.Type // what a pointer field points to
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber      = reflect.TypeFor[json.Number]()
)

// planParams returns the plan for decoding into a t, or nil when t is not
// a type the plan mirrors encoding/json for.
func planParams(t reflect.Type) *paramsPlan {
	if t.Kind() != reflect.Struct || unmarshals(t) {
		return nil
	}
	p := &paramsPlan{}
	folded := make(map[string]bool)
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil // embedded structs promote fields; not mirrored
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o == "string" {
				return nil
			}
		}
		if name == "" {
			name = sf.Name
		}
		if !plainName(name) {
			return nil
		}
		if folded[strings.ToUpper(name)] {
			return nil // which one wins is encoding/json's business
		}
		folded[strings.ToUpper(name)] = true
		f := paramsField{name: name, index: i}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			if ft.Name() != "" {
				return nil
			}
			f.ptr, f.elem = true, ft.Elem()
			p.pointers = true
			ft = ft.Elem()
		}
		if ft == jsonNumber || unmarshals(ft) {
			return nil
		}
		switch f.kind = ft.Kind(); f.kind {
		case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil
		}
		p.fields = append(p.fields, f)
	}
	return p
}

func unmarshals(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || pt.Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler)
}

// plainName reports whether name is made of ASCII letters, digits, '_'
// and '-': a name encoding/json takes from a tag as is, and folds by ASCII
// case only.
func plainName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// lookup finds the field a member name goes to as encoding/json does: an
// exact match first, then a case-insensitive one.
func (p *paramsPlan) lookup(key []byte) *paramsField {
	for i := range p.fields {
		if p.fields[i].name == string(key) {
			return &p.fields[i]
		}
	}
	for i := range p.fields {
		if asciiEqualFold(p.fields[i].name, key) {
			return &p.fields[i]
		}
	}
	return nil
}

func asciiEqualFold(s string, b []byte) bool {
	if len(s) != len(b) {
		return false
	}
	for i := 0; i < len(s); i++ {
		x, y := s[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// decodeParams decodes raw into a P with plan, the way json.Unmarshal
// would, or reports false (and a P to throw away) when the plan cannot.
func decodeParams[P any](plan *paramsPlan, raw []byte) (p P, ok bool) {
	switch {
	case plan == nil:
		return p, false
	case plan.pointers:
		// decode sets pointer fields through ptrs, which puts q on the heap.
		q := new(P)
		v := reflect.ValueOf(q).Elem()
		ok = plan.decode(raw, v, v)
		return *q, ok
	}
	// p stays on the stack: decode stores no part of dst.
	return p, plan.decode(raw, reflect.ValueOf(&p).Elem(), reflect.Value{})
}

// decode decodes raw into dst, a settable struct of the plan's type, and
// reports whether it did; on false dst may be partly written. Pointer
// fields are set through ptrs, the same value as dst (or the zero Value
// for a type without them), so that dst is never stored anywhere: a
// value decoded without pointers can live on the stack.
func (p *paramsPlan) decode(raw []byte, dst, ptrs reflect.Value) bool {
	return eachFlatMember(raw, func(key, lit []byte) bool {
		f := p.lookup(key)
		switch {
		case f == nil:
			return true
		case !f.ptr:
			// null leaves a non-pointer field as it is.
			return lit[0] == 'n' || storeScalar(dst.Field(f.index), f.kind, lit)
		case lit[0] == 'n':
			ptrs.Field(f.index).SetZero() // null clears a pointer
			return true
		}
		target := reflect.New(f.elem).Elem()
		if !storeScalar(target, f.kind, lit) {
			return false
		}
		ptrs.Field(f.index).Set(target.Addr())
		return true
	})
}

// eachFlatMember walks raw as a flat JSON object — members with plain
// keys (see plainString) and scalar values (see scalarEnd), white space
// around them — calling fn with each member's key and value literal, in
// order, duplicates included. It reports whether raw was such an object
// and fn accepted every member; it stops at the first that was not.
func eachFlatMember(raw []byte, fn func(key, lit []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for {
		key, next, ok := plainString(raw, i)
		if !ok {
			return false
		}
		i = skipSpace(raw, next)
		if i == len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		end, ok := scalarEnd(raw, i)
		if !ok || !fn(key, raw[i:end]) {
			return false
		}
		i = skipSpace(raw, end)
		if i == len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

// storeScalar sets v, of kind, from lit, a scalar JSON literal other than
// null, as encoding/json's literalStore would, or reports false where
// that would be an error.
func storeScalar(v reflect.Value, kind reflect.Kind, lit []byte) bool {
	switch c := lit[0]; {
	case c == 't' || c == 'f':
		if kind != reflect.Bool {
			return false
		}
		v.SetBool(c == 't')
	case c == '"':
		if kind != reflect.String {
			return false
		}
		v.SetString(string(lit[1 : len(lit)-1]))
	default:
		switch kind {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(string(lit), 10, 64)
			if err != nil || v.OverflowInt(n) {
				return false
			}
			v.SetInt(n)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseUint(string(lit), 10, 64)
			if err != nil || v.OverflowUint(n) {
				return false
			}
			v.SetUint(n)
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(string(lit), v.Type().Bits())
			if err != nil || v.OverflowFloat(n) {
				return false
			}
			v.SetFloat(n)
		default:
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string at b[i] when it needs no unescaping or
// UTF-8 repair — printable ASCII without '\\' — and returns its contents
// and the index after it.
func plainString(b []byte, i int) (s []byte, next int, ok bool) {
	if i == len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// scalarEnd returns the end of the scalar JSON value at b[i]: a plain
// string (see plainString), a number, true, false or null.
func scalarEnd(b []byte, i int) (int, bool) {
	if i == len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		_, next, ok := plainString(b, i)
		return next, ok
	case c == 't':
		return literalEnd(b, i, "true")
	case c == 'f':
		return literalEnd(b, i, "false")
	case c == 'n':
		return literalEnd(b, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return bus.JSONNumberEnd(b, i)
	}
	return 0, false
}

func literalEnd(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// flatObject decodes raw as the schema validator's own decoder
// (jsonschema.UnmarshalJSON: encoding/json with UseNumber) would, for a
// flat object of scalars: members in a map, numbers as json.Number, the
// last of duplicate members kept. It reports false for anything else, and
// validateParams then lets the validator decode. Params validation is the
// larger half of an instruction with a schema, and a third of it was that
// decoder.
func flatObject(raw []byte) (map[string]any, bool) {
	obj := make(map[string]any)
	ok := eachFlatMember(raw, func(key, lit []byte) bool {
		var v any
		switch lit[0] {
		case 'n':
		case 't':
			v = true
		case 'f':
			v = false
		case '"':
			v = string(lit[1 : len(lit)-1])
		default:
			v = json.Number(lit)
		}
		obj[string(key)] = v
		return true
	})
	if !ok {
		return nil, false
	}
	return obj, true
}
