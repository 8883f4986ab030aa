package agents

import (
	"encoding/json"
	"slices"
)

// paramsCheck proves params valid against the schemas most actions have —
// a flat object of typed scalars — without the schema validator. Params
// validation was the larger part of a counter step after the directives'
// encoding (jsonschema's validate, the map its input must be, the big
// numbers it checks integers with: 14 of the 36 allocations of deciding a
// signal, 40% of agents.Step's CPU).
//
// The check is sure or silent: valid reports true only for params the
// validator accepts, and false for anything else — params it rejects,
// and whatever the check does not read (escapes, nesting, null, a number
// with a fraction or an exponent for an integer) — and validateParams
// then asks the validator, which gives the verdict and the error it
// always gave. A schema with any keyword beyond the few below gets no
// check at all.
type paramsCheck struct {
	props    []checkedProp
	required uint64 // bit i: props[i] is required
	closed   bool   // additionalProperties: false
}

type checkedProp struct {
	name string
	typ  string // "integer", "number", "string" or "boolean"
}

// annotations are keywords that never fail validation.
var annotations = []string{"title", "description", "default", "examples", "$comment"}

// planCheck returns the check of the params schema source, or nil when it
// is not of the shape the check reads: {"type":"object"} with
// "properties" whose members each give a scalar "type", optionally
// "required" (of declared properties) and a boolean
// "additionalProperties", and annotations. Draft 2020-12 is the only
// dialect (no "$schema").
func planCheck(source string) *paramsCheck {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(source), &top) != nil {
		return nil
	}
	c := &paramsCheck{}
	var required []string
	for k, v := range top {
		switch k {
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return nil
			}
		case "properties":
			var props map[string]map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil || props == nil || len(props) > 64 {
				return nil
			}
			for _, name := range sortedNames(props) {
				p, ok := checkedProperty(name, props[name])
				if !ok {
					return nil
				}
				c.props = append(c.props, p)
			}
		case "required":
			if json.Unmarshal(v, &required) != nil || required == nil {
				return nil
			}
		case "additionalProperties":
			var open bool
			if json.Unmarshal(v, &open) != nil {
				return nil
			}
			c.closed = !open
		default:
			if !slices.Contains(annotations, k) {
				return nil
			}
		}
	}
	if _, typed := top["type"]; !typed {
		return nil
	}
	for _, name := range required {
		i := slices.IndexFunc(c.props, func(p checkedProp) bool { return p.name == name })
		if i < 0 {
			return nil // required but not declared: the validator's business
		}
		c.required |= 1 << i
	}
	return c
}

func checkedProperty(name string, schema map[string]json.RawMessage) (checkedProp, bool) {
	if !plainName(name) || schema == nil {
		return checkedProp{}, false
	}
	p := checkedProp{name: name}
	for k, v := range schema {
		switch {
		case k == "type":
			if json.Unmarshal(v, &p.typ) != nil {
				return checkedProp{}, false
			}
			switch p.typ {
			case "integer", "number", "string", "boolean":
			default:
				return checkedProp{}, false
			}
		case !slices.Contains(annotations, k):
			return checkedProp{}, false
		}
	}
	return p, p.typ != ""
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// valid reports whether raw is surely valid params: empty (validated as
// {}), or a flat JSON object whose members the check can read, each of
// its property's type, none undeclared when the schema is closed, every
// required one present. Members repeated are each checked (the validator
// sees the last).
func (c *paramsCheck) valid(raw []byte) bool {
	if len(raw) == 0 {
		return c.required == 0
	}
	var seen uint64
	flat := eachFlatMember(raw, func(key, lit []byte) bool {
		for j := range c.props {
			if c.props[j].name == string(key) {
				seen |= 1 << j
				return c.props[j].accepts(lit)
			}
		}
		return !c.closed
	})
	return flat && seen&c.required == c.required
}

// accepts reports whether lit, a scalar literal scalarEnd delimited, is
// surely of the property's type.
func (p *checkedProp) accepts(lit []byte) bool {
	switch c := lit[0]; p.typ {
	case "string":
		return c == '"'
	case "boolean":
		return c == 't' || c == 'f'
	case "number":
		return c == '-' || '0' <= c && c <= '9'
	case "integer":
		// Digits only: "1.0" and "1e2" are integers to the validator
		// too, but that is its call.
		for j, d := range lit {
			if !('0' <= d && d <= '9' || j == 0 && d == '-') {
				return false
			}
		}
		return true
	}
	return false
}
