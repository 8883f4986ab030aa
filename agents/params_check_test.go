package agents

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/jido-bus/jido-bus/schemas"
)

// counterParams is the counter's increment schema (agents/builtin).
const counterParams = `{
  "type": "object",
  "properties": {"by": {"type": "integer", "default": 1, "description": "how much to add or take away"}},
  "additionalProperties": false
}`

// TestPlanCheck: the schemas actions have get a check; a schema with
// anything the check does not read gets none.
func TestPlanCheck(t *testing.T) {
	for _, src := range []string{
		counterParams,
		`{"type": "object", "additionalProperties": false}`,
		`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
		`{"type":"object","title":"t","properties":{"s":{"type":"string","examples":["x"],"$comment":"c"},"f":{"type":"boolean"}},"additionalProperties":true}`,
	} {
		if planCheck(src) == nil {
			t.Errorf("no check for %s", src)
		}
	}
	for _, src := range []string{
		`{}`,
		`{"properties":{"a":{"type":"number"}}}`,
		`{"type":"object","properties":{"a":{"type":"number","minimum":0}}}`,
		`{"type":"object","properties":{"a":{"type":["number","null"]}}}`,
		`{"type":"object","properties":{"a":{"type":"array"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","format":"date-time"}}}`,
		`{"type":"object","properties":{"a":{"enum":[1]}}}`,
		`{"type":"object","properties":{"a":true}}`,
		`{"type":"object","properties":{"a b":{"type":"string"}}}`,
		`{"type":"object","required":["missing"]}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","minProperties":1}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"type":"object","$ref":"#/$defs/x","$defs":{"x":{}}}`,
		`{"type":"object","properties":{"a":{"type":"string","deprecated":true}}}`,
		`not json`,
	} {
		if planCheck(src) != nil {
			t.Errorf("a check for %s", src)
		}
	}
}

// checkSchemas are schemas of the shape planCheck reads, each one of the
// shapes (closed or open, required members, every scalar type).
var checkSchemas = []string{
	counterParams,
	`{"type":"object","additionalProperties":false}`,
	`{"type":"object"}`,
	`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
	`{"type":"object","properties":{"s":{"type":"string"},"f":{"type":"boolean"},"n":{"type":"integer"}},"required":["s"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"}},"additionalProperties":true}`,
}

var (
	paramNames  = []string{"by", "By", "a", "b", "s", "f", "n", "x", "extra", `q\"x`}
	paramValues = []string{`1`, `-7`, `0`, `-0`, `1.0`, `1e2`, `2.5`, `-1e-3`, `9007199254740993`, `1e400`,
		`"x"`, `""`, `"<&>"`, `"\u00e9"`, `"é"`, `true`, `false`, `null`, `{}`, `[1]`, `{"a":1}`, `01`, `+1`, `.5`, `"unterminated`}
)

// drawParams draws params near the schemas' members: their names in other
// cases, values of every JSON type and numbers of every form, repeats,
// white space, and broken JSON.
var drawParams = rapid.Custom(func(t *rapid.T) []byte {
	if rapid.IntRange(0, 9).Draw(t, "empty") == 0 {
		return nil
	}
	ws := rapid.SampledFrom([]string{"", " ", "\n\t", "  "})
	var b strings.Builder
	b.WriteString(ws.Draw(t, "w0") + "{")
	for i := range rapid.IntRange(0, 4).Draw(t, "members") {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(ws.Draw(t, "w1") + `"` + rapid.SampledFrom(paramNames).Draw(t, "name") + `"` + ws.Draw(t, "w2") + ":" + ws.Draw(t, "w3"))
		b.WriteString(rapid.SampledFrom(paramValues).Draw(t, "value") + ws.Draw(t, "w4"))
	}
	b.WriteString("}" + rapid.SampledFrom([]string{"", " ", "x", "}"}).Draw(t, "tail"))
	return []byte(b.String())
})

// TestParamsCheckSure: params the check calls valid the validator accepts,
// for every schema it plans and any params; and it does call the usual
// ones valid, or it would save nothing.
func TestParamsCheckSure(t *testing.T) {
	type planned struct {
		check *paramsCheck
		ba    *boundAction
	}
	var all []planned
	for _, src := range checkSchemas {
		s, err := schemas.Compile("p", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		c := planCheck(src)
		if c == nil {
			t.Fatalf("no check for %s", src)
		}
		all = append(all, planned{c, &boundAction{params: s}})
	}
	sure := 0
	// Every member alone and beside a valid one, on every schema.
	for _, p := range all {
		for _, name := range paramNames {
			for _, v := range paramValues {
				for _, raw := range []string{`{"` + name + `":` + v + `}`, `{"s":"x","` + name + `":` + v + `}`, `{"a":1,"b":2,"` + name + `":` + v + `}`} {
					if p.check.valid([]byte(raw)) {
						sure++
						if err := validateParams(p.ba, []byte(raw)); err != nil {
							t.Fatalf("%s: the check says valid, the validator: %v", raw, err)
						}
					}
				}
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SampledFrom(all).Draw(t, "schema")
		raw := drawParams.Draw(t, "params")
		if !p.check.valid(raw) {
			return
		}
		sure++
		if err := validateParams(p.ba, raw); err != nil {
			t.Fatalf("%s: the check says valid, the validator: %v", raw, err)
		}
	})
	if sure == 0 {
		t.Fatal("the check never said valid")
	}
	counter := planCheck(counterParams)
	for _, raw := range []string{``, `{}`, `{"by":1}`, `{"by":-12}`, " {\"by\" : 1 }\n  "} {
		if !counter.valid([]byte(raw)) {
			t.Errorf("the counter's check does not take %q", raw)
		}
	}
}

// FuzzParamsCheck: whatever the params, the check never calls valid what
// the validator refuses.
func FuzzParamsCheck(f *testing.F) {
	for _, p := range []string{`{"by":1}`, `{"a":1,"b":2}`, `{"s":"x","f":true,"n":3}`, `{"n":1e2}`, ``} {
		f.Add(p)
	}
	var checks []*paramsCheck
	var bas []*boundAction
	for _, src := range checkSchemas {
		s, err := schemas.Compile("p", []byte(src))
		if err != nil {
			f.Fatal(err)
		}
		checks = append(checks, planCheck(src))
		bas = append(bas, &boundAction{params: s})
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for i, c := range checks {
			if c.valid([]byte(raw)) {
				if err := validateParams(bas[i], []byte(raw)); err != nil {
					t.Fatalf("schema %d, %q: the check says valid, the validator: %v", i, raw, err)
				}
			}
		}
	})
}
