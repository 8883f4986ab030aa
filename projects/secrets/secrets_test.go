package secrets

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestScrubEveryFormAServerMayEcho(t *testing.T) {
	const key = "sk-live+key/with=odd&chars\"0123"
	s := New([]string{"OPENAI_API_KEY=" + key, "LANG=C"}, []string{"OPENAI_API_KEY"})
	for _, echoed := range []string{
		key,
		"Bearer " + key,
		base64.StdEncoding.EncodeToString([]byte(key)),
		base64.RawURLEncoding.EncodeToString([]byte(key)),
		url.QueryEscape(key),
		`sk-live+key/with=odd&chars\"0123`, // inside a JSON body shown as text
	} {
		got := s.Scrub("the server said: " + echoed + ".")
		if strings.Contains(got, echoed) || !strings.Contains(got, "[redacted $OPENAI_API_KEY]") {
			t.Errorf("Scrub(%q) = %q: want the key replaced by its label", echoed, got)
		}
	}
	if got := s.Scrub("C is the language"); got != "C is the language" {
		t.Errorf("a variable not named a secret was scrubbed: %q", got)
	}
}

// A secret encoded inside a longer text ("Bearer <key>" or "user:<key>"
// in base64, as a Basic credential is) cannot be decoded back from what
// Scrub leaves, at whatever offset it starts.
func TestScrubBase64OfALongerText(t *testing.T) {
	const key = "sk-0123456789abcdef"
	s := New([]string{"K=" + key}, []string{"K"})
	for _, prefix := range []string{"", "B", "Be", "Bearer ", "user:", "x:y:"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			text := enc.EncodeToString([]byte(prefix + key + " and more"))
			got := s.Scrub("header: " + text)
			if !strings.Contains(got, "[redacted $K]") {
				t.Errorf("%q encoded (%s): not scrubbed: %q", prefix+key, text, got)
			}
			// Whatever base64 run is left decodes to no more than a few
			// bytes of the key.
			for _, run := range strings.FieldsFunc(got, func(r rune) bool { return r == ' ' || r == '[' || r == ']' }) {
				for cut := 0; cut < 4 && cut < len(run); cut++ {
					dec, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(run[cut:], "="))
					dec2, _ := base64.RawURLEncoding.DecodeString(strings.TrimRight(run[cut:], "="))
					for _, d := range []string{string(dec), string(dec2)} {
						if strings.Contains(d, key[:6]) || strings.Contains(d, key[len(key)-6:]) {
							t.Errorf("%q encoded: what is left, %q, decodes to %q", prefix+key, got, d)
						}
					}
				}
			}
		}
	}
}

func TestWebhookSecretsAndValuesAreSecrets(t *testing.T) {
	s := New([]string{"JIDO_SECRET_HOOK=hook-signing-key", "PATH=/usr/bin"}, nil, Value{Label: "--password", Secret: "flag-password"})
	if !s.Named("JIDO_SECRET_HOOK") || s.Named("PATH") {
		t.Fatalf("Named: JIDO_SECRET_* must be a secret's name, PATH not")
	}
	if got := s.Scrub("x hook-signing-key y flag-password z"); got != "x [redacted $JIDO_SECRET_HOOK] y [redacted --password] z" {
		t.Fatalf("Scrub = %q", got)
	}
	// A variable holding a secret is one too, whatever its name.
	if !s.Holds("GIT_URL", "https://u:flag-password@example.com/") || !s.Holds("X", "flag-password") {
		t.Fatal("a variable holding a secret value is not recognised")
	}
	if s.Holds("PATH", "/usr/bin") {
		t.Fatal("PATH holds no secret")
	}
}

func TestShortSecretsAreNeverPassedButNotScrubbed(t *testing.T) {
	s := New([]string{"JIDO_PASSWORD=bin"}, []string{"JIDO_PASSWORD", "JIDO_TOKEN"})
	if !s.Named("JIDO_TOKEN") {
		t.Fatal("a secret's variable that is not set is still a secret's name")
	}
	if !s.Holds("JIDO_PASSWORD", "bin") || !s.Holds("OTHER", "bin") {
		t.Fatal("a short secret must still be kept from commands")
	}
	if s.Holds("PATH", "/usr/bin:/bin") {
		t.Fatal("a short secret inside another value must not take it away")
	}
	if got := s.Scrub("/usr/bin"); got != "/usr/bin" {
		t.Fatalf("a secret under MinScrubLen is scrubbed: %q", got)
	}
}

func TestPendingHoldsBackAPrefixOfASecret(t *testing.T) {
	s := New([]string{"K=abcdefgh"}, []string{"K"})
	cases := []struct {
		text string
		want int
	}{
		{"hello ", 0},
		{"hello a", 1},
		{"hello abcd", 4},
		{"hello abcdefg", 7},
		{"hello [redacted $K]", 0}, // a whole secret is Scrub's business
		{"", 0},
	}
	for _, c := range cases {
		if got := s.Pending(c.text); got != c.want {
			t.Errorf("Pending(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	var nilSet *Set
	if nilSet.Pending("abc") != 0 || nilSet.Scrub("abc") != "abc" || nilSet.Holds("K", "abcdefgh") {
		t.Fatal("a nil Set holds nothing")
	}
}

func TestWithAddsAKey(t *testing.T) {
	base := New([]string{"JIDO_TOKEN=node-token-1"}, []string{"JIDO_TOKEN"})
	s := base.With(Value{Label: "$K", Secret: "provider-key"})
	if got := s.Scrub("node-token-1 provider-key"); got != "[redacted $JIDO_TOKEN] [redacted $K]" {
		t.Fatalf("Scrub = %q", got)
	}
	if base.Scrub("provider-key") != "provider-key" {
		t.Fatal("With changed the Set it was called on")
	}
	if !s.Named("JIDO_TOKEN") {
		t.Fatal("With lost the names")
	}
}
