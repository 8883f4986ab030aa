package llm

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzScriptLine: any line either loads as a script or is refused with a
// config error naming the file; it never panics.
func FuzzScriptLine(f *testing.F) {
	f.Add(`{"text":"hi","chunk":2}`)
	f.Add(`{"tool_calls":[{"name":"read_file","args":{"path":"a"}}]}`)
	f.Add(`{"tool_calls":[{"name":"x","args_text":"{oops"}]}`)
	f.Add(`{"fail":{"kind":"server","status":500,"retry_after_ms":10}}`)
	f.Add(`{"text":1}`)
	f.Add(`{} {}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := New(Config{Provider: "scripted", Script: path}, func(string) string { return "" }, nil)
		if err != nil && Classify(err).Kind != KindConfig {
			t.Fatalf("line %q: %v is not a config error", line, err)
		}
	})
}
