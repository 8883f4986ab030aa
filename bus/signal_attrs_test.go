package bus

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
)

// TestValidateSignalAttributes: every attribute is a CloudEvents string —
// valid UTF-8 without control characters — whichever way the signal was
// built (the Go API hands signals to the runtime without a codec), an
// extension is named in lower-case letters and digits and holds a value
// the log can write, a time fits the log's nanosecond clock, and the
// attributes fit the log's limit. Each case is one odd byte that used to
// pass and break something later (issue 11).
func TestValidateSignalAttributes(t *testing.T) {
	v1 := func(s *Signal) *event.EventContextV1 { return s.Context.(*event.EventContextV1) }
	str := func(v string) *string { return &v }
	cases := []struct {
		name    string
		mutate  func(*Signal)
		lim     Limits
		want    string
		mention string
	}{
		{"invalid UTF-8 id", func(s *Signal) { v1(s).ID = "bad\xff" }, Limits{}, ReasonInvalidAttribute, "id"},
		{"NUL in id", func(s *Signal) { v1(s).ID = "a\x00b" }, Limits{}, ReasonInvalidAttribute, "U+0000"},
		{"C1 control in id", func(s *Signal) { v1(s).ID = "a\u0085b" }, Limits{}, ReasonInvalidAttribute, "U+0085"},
		{"invalid UTF-8 subject", func(s *Signal) { v1(s).Subject = str("s\xc3") }, Limits{}, ReasonInvalidAttribute, "subject"},
		{"tab in subject", func(s *Signal) { v1(s).Subject = str("a\tb") }, Limits{}, ReasonInvalidAttribute, "subject"},
		{"invalid UTF-8 in source query", func(s *Signal) { v1(s).Source = types.URIRef{URL: url.URL{Path: "/x", RawQuery: "q=\xff"}} }, Limits{}, ReasonInvalidAttribute, "source"},
		{"invalid UTF-8 content type", func(s *Signal) { v1(s).DataContentType = str("text/\xff") }, Limits{}, ReasonInvalidAttribute, "datacontenttype"},
		{"invalid UTF-8 extension", func(s *Signal) { v1(s).Extensions = map[string]any{"trace": "\xfe"} }, Limits{}, ReasonInvalidAttribute, "trace"},
		{"NUL in extension", func(s *Signal) { v1(s).Extensions = map[string]any{"trace": "\x00"} }, Limits{}, ReasonInvalidAttribute, "trace"},
		{"upper-case extension name", func(s *Signal) { v1(s).Extensions = map[string]any{"Trace": "x"} }, Limits{}, ReasonInvalidAttribute, "Trace"},
		{"extension name with underscore", func(s *Signal) { v1(s).Extensions = map[string]any{"a_b": "x"} }, Limits{}, ReasonInvalidAttribute, "a_b"},
		{"extension value of no CloudEvents type", func(s *Signal) { v1(s).Extensions = map[string]any{"obj": map[string]int{"x": 1}} }, Limits{}, ReasonInvalidAttribute, "obj"},
		{"time after 2262", func(s *Signal) { s.SetTime(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)) }, Limits{}, ReasonInvalidAttribute, "time"},
		{"time before 1678", func(s *Signal) { s.SetTime(time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)) }, Limits{}, ReasonInvalidAttribute, "time"},
		{"attributes over the limit", func(s *Signal) { s.SetSubject(strings.Repeat("x", 100)) }, Limits{MaxAttributeBytes: 100}, ReasonTooLarge, "attributes"},
		{"attributes over the default limit", func(s *Signal) { s.SetSource("/" + strings.Repeat("x", DefaultMaxAttributeBytes)) }, Limits{}, ReasonTooLarge, "attributes"},
		{"attributes without a limit", func(s *Signal) { s.SetSource("/" + strings.Repeat("x", DefaultMaxAttributeBytes)) }, Limits{MaxAttributeBytes: -1}, "", ""},
		{"valid non-ASCII", func(s *Signal) { s.SetSubject("ünïcode ✓"); s.SetExtension("note", "é") }, Limits{}, "", ""},
		{"percent escapes in source", func(s *Signal) { s.SetSource("https://x/a%FFb") }, Limits{}, "", ""},
		{"integer extension", func(s *Signal) { s.SetExtension("n", 7) }, Limits{}, "", ""},
		{"time at the edge", func(s *Signal) { s.SetTime(time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)) }, Limits{}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewSignal("a.b", "src", nil)
			if err != nil {
				t.Fatal(err)
			}
			c.mutate(&s)
			err = ValidateSignal(&s, c.lim)
			if c.want == "" {
				if err != nil {
					t.Fatalf("ValidateSignal = %v", err)
				}
				return
			}
			if ErrorType(err) != c.want || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("ValidateSignal = %v, want %s mentioning %q", err, c.want, c.mention)
			}
		})
	}
}

// TestAttributeBytes: the count the log's limit applies to grows with
// every attribute, extensions included, and does not count the data.
func TestAttributeBytes(t *testing.T) {
	s, err := NewSignal("a.b", "src", map[string]string{"big": strings.Repeat("x", 1000)})
	if err != nil {
		t.Fatal(err)
	}
	base := AttributeBytes(&s)
	if base > 200 {
		t.Fatalf("AttributeBytes = %d for a small signal with 1 KB of data", base)
	}
	s.SetExtension("trace", strings.Repeat("t", 50))
	if got := AttributeBytes(&s); got < base+len("trace")+50 {
		t.Fatalf("AttributeBytes = %d after a 55-byte extension, was %d", got, base)
	}
}

// TestValidateInputLeavesRoomForDerivedEntries: what comes in at the door
// must leave room for the entries the runtime derives from it, which
// repeat its id and source (a cmd record's id is "cmd:"+source+"#"+id, an
// emitted signal's id and causationid both repeat the id). So the door
// takes a quarter of the log's attribute limit, and a signal the door
// refuses too_large may still be one the log would take.
func TestValidateInputLeavesRoomForDerivedEntries(t *testing.T) {
	lim := Limits{MaxAttributeBytes: 4000}
	s, err := NewSignal("a.b", "/"+strings.Repeat("s", 1500), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateSignal(&s, lim); err != nil {
		t.Fatalf("the log's check refused %d bytes of attributes under a limit of 4000: %v", AttributeBytes(&s), err)
	}
	err = ValidateInput(&s, lim)
	if ErrorType(err) != ReasonTooLarge || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("ValidateInput = %v, want too_large naming the input limit 1000", err)
	}
	small, _ := NewSignal("a.b", "src", nil)
	if err := ValidateInput(&small, lim); err != nil {
		t.Fatalf("ValidateInput refused a small signal: %v", err)
	}
	if got := lim.InputAttributeBytes(); got != 1000 {
		t.Fatalf("InputAttributeBytes = %d, want 1000", got)
	}
	if got := (Limits{}).InputAttributeBytes(); got != DefaultMaxAttributeBytes/4 {
		t.Fatalf("default InputAttributeBytes = %d", got)
	}
}
