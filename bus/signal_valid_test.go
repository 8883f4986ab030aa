package bus

import (
	"net/url"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"pgregory.net/rapid"
)

// TestSurelyValidAgreesWithTheSDK: whenever surelyValid says a signal is
// valid, the sdk's Validate finds nothing wrong with it, over contexts
// drawn to sit on the edges (white space, empty parts, media types with
// parameters and bad tokens, sources of every shape).
func TestSurelyValidAgreesWithTheSDK(t *testing.T) {
	text := rapid.SampledFrom([]string{"", " ", "\t", "a", " a ", "x.y", "é", "\x7f", "a b"})
	media := rapid.SampledFrom([]string{"", " ", "application/json", " application/json ", "text/plain; charset=utf-8",
		"application/cloudevents+json", "a/", "/b", "a/b/c", "a b/c", "a/b c", "a/(b)", "application", "ü/x"})
	rapid.Check(t, func(t *rapid.T) {
		ec := &event.EventContextV1{ID: text.Draw(t, "id"), Type: text.Draw(t, "type")}
		ec.Source.URL = url.URL{
			Scheme: rapid.SampledFrom([]string{"", "https", " "}).Draw(t, "scheme"),
			Host:   rapid.SampledFrom([]string{"", "example.com", " "}).Draw(t, "host"),
			Path:   text.Draw(t, "path"),
			Opaque: rapid.SampledFrom([]string{"", " ", "x"}).Draw(t, "opaque"),
		}
		if rapid.Bool().Draw(t, "has content type") {
			ct := media.Draw(t, "content type")
			ec.DataContentType = &ct
		}
		if rapid.Bool().Draw(t, "has subject") {
			sub := text.Draw(t, "subject")
			ec.Subject = &sub
		}
		if rapid.Bool().Draw(t, "has schema") {
			ec.DataSchema = &types.URI{URL: url.URL{Scheme: "https", Host: "x"}}
		}
		s := Signal{Context: ec}
		if surelyValid(&s) {
			if err := s.Validate(); err != nil {
				t.Fatalf("surelyValid, but the sdk says %v for %+v", err, ec)
			}
		}
		if got, want := HasSource(&s), s.Source() != ""; got != want {
			t.Fatalf("HasSource = %v, Source() = %q", got, s.Source())
		}
	})
}

// TestSurelyValidTakesTheCommonSignals: the signals jido-bus makes itself
// take the fast path (else it would be dead weight).
func TestSurelyValidTakesTheCommonSignals(t *testing.T) {
	s, err := NewSignal("counter.increment", "/agent/c1", map[string]int{"by": 1})
	if err != nil {
		t.Fatal(err)
	}
	s.SetSubject("c1")
	if !surelyValid(&s) {
		t.Fatalf("a plain signal is not surely valid: %v", s)
	}
	for _, src := range []string{"jido-bus:runtime", "https://example.com/x", "urn:jido:1"} {
		s.SetSource(src)
		if !surelyValid(&s) {
			t.Fatalf("source %q is not surely valid", src)
		}
	}
}
