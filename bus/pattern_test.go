package bus

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestMatchPatternTable runs the cases of testdata/match.txt, one line each:
// a pattern, a type, and whether it matches.
func TestMatchPatternTable(t *testing.T) {
	f, err := os.Open("testdata/match.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 3 {
			t.Fatalf("match.txt:%d: want 3 fields, got %q", line, text)
		}
		want, err := strconv.ParseBool(fields[2])
		if err != nil {
			t.Fatalf("match.txt:%d: %v", line, err)
		}
		if got := MatchPattern(fields[0], fields[1]); got != want {
			t.Errorf("match.txt:%d: MatchPattern(%q, %q) = %v, want %v", line, fields[0], fields[1], got, want)
		}
		if p, err := CompilePattern(fields[0]); err == nil {
			if got := p.Match(fields[1]); got != want {
				t.Errorf("match.txt:%d: Pattern(%q).Match(%q) = %v, want %v", line, fields[0], fields[1], got, want)
			}
		}
		n++
	}
	if n < 40 {
		t.Fatalf("read only %d cases from match.txt", n)
	}
}

func TestLongTypes(t *testing.T) {
	segs := make([]string, 100)
	for i := range segs {
		segs[i] = "s" + strconv.Itoa(i)
	}
	long := strings.Join(segs, ".")
	cases := []struct {
		pattern string
		want    bool
	}{
		{long, true},
		{"s0.**", true},
		{"**.s99", true},
		{"s0.**.s50.**.s99", true},
		{"s0.**.s99.**.s50", false},
		{strings.Repeat("*.", 99) + "*", true},
		{strings.Repeat("*.", 100) + "*", false},
		{strings.Repeat("**.*.", 49) + "s98.s99", true},
	}
	for _, c := range cases {
		if got := MatchPattern(c.pattern, long); got != c.want {
			t.Errorf("MatchPattern(%.40q…, 100 segments) = %v, want %v", c.pattern, got, c.want)
		}
	}
}

func TestValidatePattern(t *testing.T) {
	valid := []string{"a", "a.b", "*", "**", "a.*", "a.**", "**.a", "a.**.b", "a.**.b.**.c", "*.**", "**.*", "A-b_c.9"}
	for _, p := range valid {
		if err := ValidatePattern(p); err != nil {
			t.Errorf("ValidatePattern(%q) = %v, want nil", p, err)
		}
	}
	invalid := map[string]string{
		"":                              "empty",
		".":                             "empty segment",
		"a.":                            "empty segment",
		".a":                            "empty segment",
		"user..created":                 "empty segment",
		"a.**.**.b":                     "twice in a row",
		"**.**":                         "twice in a row",
		"us*er":                         "whole segment",
		"a**":                           "whole segment",
		"***":                           "whole segment",
		"a.b c":                         "not allowed",
		"a/b":                           "not allowed",
		"a.>":                           "not allowed",
		strings.Repeat("a.", 600) + "a": "limit",
	}
	for p, want := range invalid {
		err := ValidatePattern(p)
		if err == nil {
			t.Errorf("ValidatePattern(%q) = nil, want an error about %s", p, want)
			continue
		}
		if ErrorType(err) != ReasonInvalidPattern || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidatePattern(%q) = %v, want %s error mentioning %q", p, err, ReasonInvalidPattern, want)
		}
	}
}

func TestValidateType(t *testing.T) {
	for _, typ := range []string{"a", "counter.increment", "jido.agent.child.started", "x-1_y.Z"} {
		if err := ValidateType(typ); err != nil {
			t.Errorf("ValidateType(%q) = %v", typ, err)
		}
	}
	for _, typ := range []string{"", "a..b", "a.", "*", "a.*", "a.**", "a b", "é"} {
		if err := ValidateType(typ); ErrorType(err) != ReasonInvalidType {
			t.Errorf("ValidateType(%q) = %v, want %s", typ, err, ReasonInvalidType)
		}
	}
}

// matchReference is the obvious recursive definition of pattern matching,
// to check the two-pointer matcher against.
func matchReference(p, t []string) bool {
	if len(p) == 0 {
		return len(t) == 0
	}
	switch p[0] {
	case MultiWildcard:
		for i := 0; i <= len(t); i++ {
			if matchReference(p[1:], t[i:]) {
				return true
			}
		}
		return false
	case SingleWildcard:
		return len(t) > 0 && matchReference(p[1:], t[1:])
	}
	return len(t) > 0 && p[0] == t[0] && matchReference(p[1:], t[1:])
}

func TestMatchPatternAgreesWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lit := rapid.SampledFrom([]string{"a", "b", "c"})
		typ := rapid.SliceOfN(lit, 1, 8).Draw(t, "type")
		pat := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "c", "*", "**"}), 1, 8).Draw(t, "pattern")
		ps := strings.Join(pat, ".")
		if ValidatePattern(ps) != nil {
			return // adjacent '**'
		}
		want := matchReference(pat, typ)
		if got := MatchPattern(ps, strings.Join(typ, ".")); got != want {
			t.Fatalf("MatchPattern(%q, %q) = %v, reference says %v", ps, strings.Join(typ, "."), got, want)
		}
	})
}

func TestMatchPatternDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		MatchPattern("user.**.created", "user.a.b.c.created")
	})
	if allocs != 0 {
		t.Fatalf("MatchPattern allocates %v times per call", allocs)
	}
}
