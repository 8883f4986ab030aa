package tools

import (
	"encoding/json"
	"testing"
)

// TestRunnerHandsOnTheText: the text of an output that has one
// (read_file's content) is in Result.Text, so a gateway does not decode
// the data again to show it; it is the data's TextField member, and an
// output without one leaves it empty.
func TestRunnerHandsOnTheText(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\nworld\n"}, nil, Options{})
	res, err := f.call(t, "read_file", map[string]any{"path": "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Content string }
	if err := json.Unmarshal(res.Data, &out); err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello\nworld\n" || res.Text != out.Content {
		t.Fatalf("Text %q, want the content %q", res.Text, out.Content)
	}
	if res, _ := f.call(t, "list_dir", map[string]any{"path": "."}); !res.OK || res.Text != "" {
		t.Fatalf("list_dir: ok %v, Text %q; want no text", res.OK, res.Text)
	}
}
