package dispatch

import (
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

func TestConfigJSON(t *testing.T) {
	cases := []struct {
		in   string
		want Config
		out  string // what MarshalJSON writes back; "" means in itself
	}{
		{in: `"nats"`, want: Config{Kind: KindNATS}},
		{in: `"log"`, want: Config{Kind: KindLog}},
		{in: `"noop"`, want: Config{Kind: KindNoop}},
		{in: `{}`, want: Config{}, out: `"nats"`},
		{in: ` {"kind":"log"} `, want: Config{Kind: KindLog}, out: `"log"`},
		{
			in:   `{"kind":"nats","subject":"audit.signals","mode":"structured"}`,
			want: Config{Kind: KindNATS, Subject: "audit.signals", Mode: ModeStructured},
		},
		{
			in:   `{"mode":"binary"}`,
			want: Config{Mode: ModeBinary},
			out:  `{"kind":"nats","mode":"binary"}`,
		},
		{
			in: `{"kind":"webhook","url":"https://hooks.example.com/jido","secret_env":"JIDO_SECRET_HOOK","headers":{"X-Tenant":"t"},` +
				`"timeout":"2s","max_attempts":3,"backoff":"100ms","max_backoff":"1m30s"}`,
			want: Config{Kind: KindWebhook, URL: "https://hooks.example.com/jido", SecretEnv: "JIDO_SECRET_HOOK",
				Headers: map[string]string{"X-Tenant": "t"}, Timeout: 2 * time.Second,
				MaxAttempts: 3, Backoff: 100 * time.Millisecond, MaxBackoff: 90 * time.Second},
		},
		{in: `{"kind":"log","level":"debug"}`, want: Config{Kind: KindLog, Level: "debug"}},
		{
			// What the webhook policy refuses still decodes, so that an
			// agent stored with it recovers; its deliveries then fail,
			// saying what to do (TestWebhookGuardSecretsAndHeaders).
			in:   `{"kind":"webhook","url":"http://127.0.0.1:8080/","secret":"k","headers":{"Authorization":"Bearer t"}}`,
			want: Config{Kind: KindWebhook, URL: "http://127.0.0.1:8080/", Secret: "k", Headers: map[string]string{"Authorization": "Bearer t"}},
		},
		{
			in: `["nats",{"kind":"webhook","url":"https://hooks.example.com:8443/","secret_env":"JIDO_SECRET_K"},["log","noop"]]`,
			want: Config{Targets: []Config{
				{Kind: KindNATS},
				{Kind: KindWebhook, URL: "https://hooks.example.com:8443/", SecretEnv: "JIDO_SECRET_K"},
				{Targets: []Config{{Kind: KindLog}, {Kind: KindNoop}}},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			var got Config
			if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Unmarshal = %#v, want %#v", got, tc.want)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			want := tc.out
			if want == "" {
				want = strings.TrimSpace(tc.in)
			}
			if string(b) != want {
				t.Errorf("Marshal = %s, want %s", b, want)
			}
			var again Config
			if err := json.Unmarshal(b, &again); err != nil {
				t.Fatalf("Unmarshal of Marshal: %v", err)
			}
			if b2, _ := json.Marshal(again); string(b2) != string(b) {
				t.Errorf("second round trip = %s, want %s", b2, b)
			}
		})
	}
}

func TestConfigInsideAStruct(t *testing.T) {
	// How agent options carry it: a field that may be absent or null.
	type options struct {
		DefaultDispatch Config `json:"default_dispatch"`
	}
	var o options
	if err := json.Unmarshal([]byte(`{"default_dispatch":null}`), &o); err != nil || !reflect.DeepEqual(o.DefaultDispatch, Config{}) {
		t.Fatalf("null: %v, %#v", err, o.DefaultDispatch)
	}
	err := json.Unmarshal([]byte(`{"default_dispatch":{"kind":"log","level":"loud"}}`), &o)
	if !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) || !strings.Contains(err.Error(), "level") {
		t.Fatalf("invalid nested config: err = %v, want an invalid_request naming level", err)
	}
}

func TestConfigInvalid(t *testing.T) {
	const hook = `"kind":"webhook","url":"https://h.example/x","secret":"s"`
	cases := []struct {
		in   string
		want string // the error names the field this way
	}{
		{`"webhook"`, `"webhook" needs a url and a secret`},
		{`"kafka"`, `unknown kind "kafka"`},
		{`42`, "is a number"},
		{`true`, "is a boolean"},
		{`[]`, "targets: the list is empty"},
		{`[null]`, "[0] is null"},
		{`{"kind":"kafka"}`, `kind: unknown kind "kafka"`},
		{`{"kind":"webhook","secret":"s"}`, "url: is required"},
		{`{"kind":"webhook","url":"ftp://h/x","secret":"s"}`, "url: \"ftp://h/x\" is not an absolute http or https URL"},
		{`{"kind":"webhook","url":"/relative","secret":"s"}`, "url: "},
		{`{"kind":"webhook","url":"https://u:pw@h/x"}`, "secret_env: is required"},
		{`{` + hook + `,"secret_env":"HOOK_KEY"}`, "secret_env: and secret are both set"},
		{`{"kind":"nats","secret_env":"HOOK_KEY"}`, "secret_env"},
		{`{` + hook + `,"headers":{"content-type":"text/plain"}}`, `headers: header "content-type" is written by the dispatcher`},
		{`{` + hook + `,"headers":{"Ce-Source":"x"}}`, `headers: header "Ce-Source" is written by the dispatcher`},
		{`{` + hook + `,"headers":{"Jido-Signature":"x"}}`, `headers: header "Jido-Signature"`},
		{`{` + hook + `,"headers":{"a b":"x"}}`, `headers: header name "a b" is not an HTTP token`},
		{`{` + hook + `,"headers":{"X-A":"1\r\nX-B: 2"}}`, `headers: header "X-A": the value contains a control byte`},
		{`{` + hook + `,"headers":{"X-Tenant":"a","x-tenant":"b"}}`, `headers: "X-Tenant" and "x-tenant" are the same header`},
		{`{` + hook + `,"timeout":"soon"}`, `timeout: "soon" is not a duration`},
		{`{` + hook + `,"timeout":"-1s"}`, "timeout: -1s is outside"},
		{`{` + hook + `,"timeout":"1h"}`, "timeout: 1h0m0s is outside"},
		{`{` + hook + `,"timeout":5}`, "timeout: want a JSON value for a Go string"},
		{`{` + hook + `,"max_attempts":-1}`, "max_attempts: -1 is outside 0..100"},
		{`{` + hook + `,"max_attempts":"3"}`, "max_attempts: want a JSON value for a Go int"},
		{`{` + hook + `,"backoff":"2h"}`, "backoff: 2h0m0s is outside"},
		{`{` + hook + `,"backoff":"2s","max_backoff":"1s"}`, "max_backoff: 1s is less than backoff 2s"},
		{`{` + hook + `,"backoff":"40s"}`, "max_backoff: 30s is less than backoff 40s"},
		{`{` + hook + `,"secrett":"s"}`, `has the unknown field "secrett"`},
		{`{` + hook + `,"subject":"x"}`, "subject: belongs to kind nats, not webhook"},
		{`{"kind":"nats","url":"https://h/x"}`, "url: belongs to kind webhook, not nats"},
		{`{"url":"https://h/x"}`, `url: belongs to kind webhook, not nats (a config without "kind" is a nats target)`},
		{`{"kind":"noop","level":"info"}`, "level: belongs to kind log, not noop"},
		{`{"kind":"log","level":"loud"}`, `level: "loud" is not a level`},
		{`{"kind":"nats","mode":"json"}`, `mode: "json" is not a mode`},
		{`{"kind":"nats","subject":"audit.*"}`, `subject: "audit.*" has the wildcard "*"`},
		{`{"kind":"nats","subject":"audit.>"}`, `subject: "audit.>" has the wildcard ">"`},
		{`{"kind":"nats","subject":"audit..x"}`, "subject: \"audit..x\" has an empty token at position 1"},
		{`{"kind":"nats","subject":"audit x"}`, "subject: \"audit x\" contains whitespace"},
		{`["nats",{"kind":"webhook","url":"https://h/x"}]`, "[1].secret_env: is required"},
		{`["noop",[{"kind":"log","level":"x"}]]`, "[1][0].level: "},
		{`["noop","webhook"]`, `[1] "webhook" needs a url`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			var c Config
			err := json.Unmarshal([]byte(tc.in), &c)
			be, ok := errors.AsType[*bus.Error](err)
			if !ok || be.Type != bus.ReasonInvalidRequest {
				t.Fatalf("err = %v, want a *bus.Error of type invalid_request", err)
			}
			if !strings.Contains(be.Message, tc.want) {
				t.Errorf("message %q does not contain %q", be.Message, tc.want)
			}
			if !reflect.DeepEqual(c, Config{}) {
				t.Errorf("a failed Unmarshal changed the Config to %#v", c)
			}
		})
	}
}

func TestConfigValidateInGo(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // "" means valid
	}{
		{"zero", Config{}, ""},
		{"nil headers map is unset", Config{Kind: KindNATS, Headers: nil}, ""},
		{"empty list", Config{Targets: []Config{}}, "targets: the list is empty"},
		{"list with a kind", Config{Kind: KindNATS, Targets: []Config{{}}}, "kind: a list of targets has no kind"},
		{"list with a field", Config{Subject: "x", Targets: []Config{{}}}, "subject: a list of targets has no fields"},
		{"empty headers map on nats", Config{Headers: map[string]string{}}, "headers: belongs to kind webhook"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want invalid_request containing %q", err, tc.want)
			}
			if _, err := New(tc.cfg, Env{}); err == nil {
				t.Fatal("New accepted an invalid Config")
			}
		})
	}
}

func TestConfigStringRedactsSecrets(t *testing.T) {
	c := Config{Targets: []Config{
		{Kind: KindLog},
		{Kind: KindWebhook, URL: "https://user:pa55word@h.example/x", Secret: "s3cret"},
	}}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("config", "dispatch", c)
	for _, out := range []string{c.String(), b.String()} {
		if strings.Contains(out, "s3cret") || strings.Contains(out, "pa55word") {
			t.Errorf("secret in %s", out)
		}
		if !strings.Contains(out, "REDACTED") || !strings.Contains(out, "h.example/x") {
			t.Errorf("%s does not show the redacted target", out)
		}
	}
	if c.Targets[1].Secret != "s3cret" {
		t.Error("String changed the Config")
	}
}

// FuzzConfigJSON checks that decoding never panics, that its errors are
// *bus.Error values, and that whatever decodes is valid and survives a
// round trip unchanged. The seed corpus is in testdata/fuzz/FuzzConfigJSON.
func FuzzConfigJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Config
		if err := json.Unmarshal(data, &c); err != nil {
			if !json.Valid(data) {
				return
			}
			if _, ok := errors.AsType[*bus.Error](err); !ok {
				t.Fatalf("error %v is not a *bus.Error", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded %s but Validate says %v", data, err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal of decoded %s: %v", data, err)
		}
		var again Config
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("round trip of %s through %s: %v", data, b, err)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("round trip changed %s into %s", b, b2)
		}
	})
}
