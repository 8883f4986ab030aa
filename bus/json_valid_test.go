package bus

import (
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `1`, `-0`, `-`, `01`, `1.`, `.5`, `1e5`, `1E+5`, `1e`, `-1.5e-3`, `true`, `tru`, `null `, `nul`,
	`"`, `""`, `"a\"b"`, `"\u00e9"`, `"\u00g9"`, `"\x"`, "\"\t\"", "\"\xff\"", `"\/"`, `{}`, `[]`, ` [ ] `,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":[1,{"b":null}],"c":"d"}`, `[1,2,]`, `[1 2]`, `{"a":1}x`,
	`{"count":2}`, `{"operation":"add","a":1.5,"b":2,"result":3.5}`, "[\n1\r,\t2]", `[1]]`, `{"a":{}}}`,
	strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
	strings.Repeat("[", 65) + strings.Repeat("]", 64), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// FuzzValidJSON: validJSON agrees with json.Valid on every input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

func TestValidJSON(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.40q) = %v, json.Valid %v", s, got, want)
		}
	}
}
