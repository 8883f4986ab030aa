package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptedRepeatAnswersForAsLongAsOneChats: a script whose last line
// says "repeat" answers every request past its end with that line (the
// demo's third message failed the conversation: "the llm script has 5
// turns"); without it, a request past the end is still a config error
// that says how to go on. A repeat line with tool calls, or not last, is
// refused when the script is read.
func TestScriptedRepeatAnswersForAsLongAsOneChats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p := newScriptedForTest(t, write("repeat.jsonl", `{"text":"first","tool_calls":[{"name":"list_dir","args":{}}]}
{"text":"second"}
{"text":"my script has ended","repeat":true}
`))
	ctx := context.Background()
	for turn, want := range []string{"first", "second", "my script has ended", "my script has ended", "my script has ended"} {
		resp, err := p.Complete(ctx, history(turn), nil)
		if err != nil || resp.Text != want || len(resp.ToolCalls) != 0 && turn > 0 {
			t.Fatalf("turn %d: %+v %v, want %q", turn, resp, err, want)
		}
	}

	plain := newScriptedForTest(t, write("plain.jsonl", `{"text":"only"}`+"\n"))
	if _, err := plain.Complete(ctx, history(1), nil); err == nil || !strings.Contains(err.Error(), `"repeat": true`) {
		t.Errorf("past the end of a script without repeat: %v, want a config error naming repeat", err)
	}

	for name, text := range map[string]string{
		"tools.jsonl": `{"text":"again","repeat":true,"tool_calls":[{"name":"list_dir","args":{}}]}` + "\n",
		"fail.jsonl":  `{"repeat":true,"fail":{"kind":"server"}}` + "\n",
		"early.jsonl": `{"text":"a","repeat":true}` + "\n" + `{"text":"b"}` + "\n",
	} {
		_, err := New(Config{Provider: "scripted", Script: write(name, text)}, func(string) string { return "" }, nil)
		if err == nil || !strings.Contains(err.Error(), "repeat") {
			t.Errorf("%s: %v, want the repeat line refused", name, err)
		}
	}
}
