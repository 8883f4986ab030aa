package schemas

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ApplyDefaults returns a copy of v, a decoded JSON value, with the
// schema's "default" values filled in: for every member an object schema
// declares with a default and v lacks, the default is added; objects present
// in v (or added by a default) are filled the same way, to any depth. A nil
// v is filled from the schema's own default, or becomes an empty object
// when the schema declares members with defaults. v itself is never
// modified.
//
// Numbers from defaults are float64, as encoding/json decodes them, so a
// value filled here equals the same value read back from its JSON.
func (s *Schema) ApplyDefaults(v any) any {
	return applyDefaults(s.compiled, v)
}

func applyDefaults(sch *jsonschema.Schema, v any) any {
	branches := objectBranches(sch)
	if v == nil {
		for _, b := range branches {
			if b.Default != nil {
				v = plainJSON(*b.Default)
				break
			}
		}
	}
	if v == nil && declaresDefaults(branches) {
		v = map[string]any{}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(obj)
	for _, b := range branches {
		// Sorted so a default that depends on nothing else is filled the
		// same way every time; map order must not leak into results.
		for _, name := range slices.Sorted(maps.Keys(b.Properties)) {
			prop := b.Properties[name]
			cur, present := out[name]
			switch {
			case present:
				out[name] = applyDefaults(prop, cur)
			case hasDefault(prop):
				out[name] = applyDefaults(prop, nil)
			}
		}
	}
	return out
}

func hasDefault(sch *jsonschema.Schema) bool {
	for _, b := range objectBranches(sch) {
		if b.Default != nil {
			return true
		}
	}
	return false
}

func declaresDefaults(branches []*jsonschema.Schema) bool {
	for _, b := range branches {
		for _, p := range b.Properties {
			if hasDefault(p) {
				return true
			}
		}
	}
	return false
}

// plainJSON deep-copies a value decoded by the schema library (which keeps
// numbers as json.Number) into encoding/json's model, with float64 numbers.
// The copy also keeps callers from aliasing the compiled schema's default.
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			// Out of float64's range: keep the exact text, which still
			// encodes as the same JSON number.
			return x
		}
		return f
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plainJSON(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = plainJSON(e)
		}
		return a
	}
	return v
}
