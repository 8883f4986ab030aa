package views

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

func TestArtifactsStoreOnceByContent(t *testing.T) {
	a := Artifacts{Dir: t.TempDir()}
	data := []byte(strings.Repeat("é", 400)) // 800 bytes, cut at a rune boundary
	ref, err := a.Put(data, "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref.ID, "sha256:") || ref.Size != 800 || len(ref.Preview) != 512 {
		t.Fatalf("ref %+v (preview %d bytes)", ref, len(ref.Preview))
	}
	again, err := a.Put(data, "text/plain")
	if err != nil || again.ID != ref.ID {
		t.Fatalf("second Put: %+v %v", again, err)
	}
	files, _ := filepath.Glob(filepath.Join(a.Dir, "sha256", "*", "*"))
	if len(files) != 1 {
		t.Fatalf("files after two puts of one content: %v", files)
	}
	got, err := a.Get(ref.ID)
	if err != nil || string(got) != string(data) {
		t.Fatalf("Get: %v", err)
	}
	if err := os.WriteFile(files[0], []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ref.ID); err == nil || !strings.Contains(err.Error(), "hash") {
		t.Errorf("Get of a damaged artifact: %v", err)
	}
	for _, id := range []string{"sha256:" + strings.Repeat("0", 64), "md5:x", "sha256:../../etc"} {
		if _, err := a.Get(id); !errors.Is(err, ErrArtifactNotFound) {
			t.Errorf("Get(%q): %v", id, err)
		}
	}
}

func TestOffloadReplacesLargeToolOutput(t *testing.T) {
	a := Artifacts{Dir: t.TempDir(), Threshold: 1000}
	mk := func(typ string, data any) bus.Signal {
		s := bus.Signal{}
		s.SetSpecVersion(bus.SpecVersion)
		s.SetType(typ)
		s.SetID("x")
		s.SetSource("/t")
		if err := bus.SetJSONData(&s, data); err != nil {
			t.Fatal(err)
		}
		return s
	}
	big := strings.Repeat("line\n", 300)
	s := mk(conversation.ToolCompleted, map[string]any{"call_id": "t1", "output": big})
	done, err := a.Offload(&s)
	if err != nil || !done {
		t.Fatalf("Offload = %v, %v", done, err)
	}
	var d conversation.Data
	if err := json.Unmarshal(s.Data(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Output != nil || d.OutputRef == nil || d.OutputRef.Size != int64(len(big)) || d.CallID != "t1" || len(s.Data()) > 1000 {
		t.Fatalf("offloaded data %s", s.Data())
	}
	if got, err := a.Get(d.OutputRef.ID); err != nil || string(got) != big {
		t.Fatalf("artifact content: %v", err)
	}
	// The llm_context message names the artifact and carries the preview.
	if msg := toolOutput(&d); !strings.Contains(msg, d.OutputRef.ID) || !strings.HasSuffix(msg, d.OutputRef.Preview) {
		t.Errorf("tool message %q", msg)
	}
	for _, s := range []bus.Signal{
		mk(conversation.ToolCompleted, map[string]any{"call_id": "t1", "output": "small"}),
		mk(conversation.UserMessage, map[string]any{"text": big}),
	} {
		before := string(s.Data())
		if done, err := a.Offload(&s); done || err != nil || string(s.Data()) != before {
			t.Errorf("%s was offloaded: %v %v", s.Type(), done, err)
		}
	}
}
