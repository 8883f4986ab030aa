package bus

import (
	"strings"
	"testing"
)

// FuzzMatchPattern checks that MatchPattern never panics, agrees with the
// obvious recursive definition on every valid input, and that the router
// finds a route exactly when MatchPattern says it matches.
func FuzzMatchPattern(f *testing.F) {
	for _, seed := range [][2]string{
		{"user.**.created", "user.created"},
		{"a.**.c.**.f", "a.c.f"},
		{"**", "x"},
		{"*.*", "a.b"},
		{"us*er", "user"},
		{"a.**.**.b", "a.b"},
		{"", ""},
		{"a..b", "a..b"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, typ string) {
		got := MatchPattern(pattern, typ)
		valid := ValidatePattern(pattern) == nil && ValidateType(typ) == nil
		if !valid {
			if got {
				t.Fatalf("MatchPattern(%q, %q) = true for invalid input", pattern, typ)
			}
			return
		}
		if len(typ) > 200 || len(pattern) > 200 {
			return // keep the exponential reference cheap
		}
		want := matchReference(strings.Split(pattern, "."), strings.Split(typ, "."))
		if got != want {
			t.Fatalf("MatchPattern(%q, %q) = %v, reference %v", pattern, typ, got, want)
		}
		r := NewRouter[int]()
		if _, err := r.Add(pattern, 0, 1); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.First(typ); ok != want {
			t.Fatalf("Router(%q).First(%q) = %v, want %v", pattern, typ, ok, want)
		}
	})
}
