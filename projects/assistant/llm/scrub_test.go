package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/secrets"
)

const echoedKey = "sk-echoed-key-0123456789"

// A model server that echoes the key it was sent, in its error body, must
// not put the key in the error the assistant records and publishes.
func TestScrubbingHidesAnEchoedKeyInErrors(t *testing.T) {
	for _, status := range []int{401, 429, 500, 400} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				msg, _ := json.Marshal("bad credentials " + r.Header.Get("Authorization") + " (" + r.Header.Get("X-Api-Key") + ")")
				fmt.Fprintf(w, `{"type":"error","error":{"type":"x","message":%s}}`, msg)
			}))
			defer srv.Close()
			keys := env(map[string]string{"K": echoedKey})
			set := secrets.New([]string{"K=" + echoedKey}, []string{"K"})
			for _, kind := range []string{ProviderOpenAI, ProviderAnthropic} {
				p, err := New(Config{Provider: kind, Model: "m", BaseURL: srv.URL + "/v1", APIKeyEnv: "K"}, keys, srv.Client())
				if err != nil {
					t.Fatal(err)
				}
				_, raw := p.Complete(context.Background(), sampleRequest(), nil)
				if !strings.Contains(raw.Error(), echoedKey) {
					t.Fatalf("%s: the fake server did not echo the key (%v): the test proves nothing", kind, raw)
				}
				_, err = Scrubbing(p, set).Complete(context.Background(), sampleRequest(), nil)
				e := Classify(err)
				if e == nil || strings.Contains(e.Message, echoedKey) || !strings.Contains(e.Message, "[redacted $K]") {
					t.Fatalf("%s %d: %v", kind, status, err)
				}
				if e.Status != status || e.Kind != Classify(raw).Kind {
					t.Errorf("%s: scrubbing changed the error's kind or status: %+v, was %+v", kind, e, Classify(raw))
				}
				for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
					if strings.Contains(u.Error(), echoedKey) {
						t.Fatalf("%s: the cause still holds the key: %v", kind, u)
					}
				}
			}
		})
	}
}

// A key cut across streamed pieces goes out in none of them; the answer
// recorded holds no key either; the rest of the text streams whole.
func TestScrubbingHoldsBackAKeyCutAcrossPieces(t *testing.T) {
	dir := t.TempDir()
	text := "the key is " + echoedKey + ", and the key's start is sk-ech."
	line, _ := json.Marshal(map[string]any{"text": text, "chunk": 5, "tool_calls": []map[string]any{{"id": "c1", "name": "read_file", "args": map[string]string{"path": echoedKey}}}})
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Provider: ProviderScripted, Script: "s.jsonl", Files: os.DirFS(dir)}, env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	set := secrets.New([]string{"K=" + echoedKey}, []string{"K"})
	var pieces []string
	resp, err := Scrubbing(p, set).Complete(context.Background(), Request{}, func(d Delta) {
		if d.IsText() {
			pieces = append(pieces, d.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "the key is [redacted $K], and the key's start is sk-ech."
	if got := strings.Join(pieces, ""); got != want || resp.Text != want {
		t.Fatalf("streamed %q (in %d pieces), answer %q; want %q", got, len(pieces), resp.Text, want)
	}
	for _, piece := range pieces {
		if len(piece) > 0 && strings.Contains(echoedKey, piece) && len(piece) > 4 {
			t.Fatalf("a piece of the key went out alone: %q", piece)
		}
	}
	if len(resp.ToolCalls) != 1 || strings.Contains(resp.ToolCalls[0].Args, echoedKey) {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	if s := fmt.Sprintf("%v %+v", Scrubbing(p, set), Scrubbing(p, set)); !strings.Contains(s, "llm.scripted") {
		t.Fatalf("the wrapped provider does not describe itself: %s", s)
	}
}
