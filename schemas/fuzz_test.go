package schemas

import (
	"errors"
	"testing"
)

// FuzzValidateDirective feeds arbitrary bytes to the directive schemas: the
// validator must not panic, and every rejection must be a *ValidationError
// that names at least one field.
func FuzzValidateDirective(f *testing.F) {
	r, err := Builtin()
	if err != nil {
		f.Fatal(err)
	}
	var names []string
	for _, e := range r.Entries() {
		if e.Kind == "directive" {
			names = append(names, e.Name)
		}
	}
	f.Add(uint8(0), []byte(`{"kind":"emit","signal":{"specversion":"1.0","id":"a","source":"s","type":"t"}}`))
	f.Add(uint8(3), []byte(`{"kind":"stop","reason":"done"}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		s, _ := r.Lookup(names[int(which)%len(names)])
		err := s.ValidateJSON(data)
		if err == nil {
			return
		}
		ve, ok := errors.AsType[*ValidationError](err)
		if !ok || len(ve.Fields) == 0 {
			t.Fatalf("ValidateJSON(%q) = %v, want a *ValidationError with fields", data, err)
		}
	})
}
