package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// convEntry is one entry of a conversation's stream as `log show -o json`
// prints it.
type convEntry struct {
	Seq   uint64 `json:"seq"`
	Event struct {
		ID          string          `json:"id"`
		Type        string          `json:"type"`
		CausationID string          `json:"causationid"`
		Data        json.RawMessage `json:"data"`
	} `json:"event"`
}

// convEvents is the conversation events of a stream, in order.
type convEvents []convEntry

// of returns the entries of event type typ.
func (es convEvents) of(typ string) convEvents {
	var out convEvents
	for _, e := range es {
		if e.Event.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// call returns the entries of type typ about tool call id.
func (es convEvents) call(typ, id string) convEvents {
	var out convEvents
	for _, e := range es.of(typ) {
		var d struct {
			CallID string `json:"call_id"`
		}
		if json.Unmarshal(e.Event.Data, &d) == nil && d.CallID == id {
			out = append(out, e)
		}
	}
	return out
}

// has reports whether some entry of type typ has data holding every one of
// want (substrings of its JSON).
func (es convEvents) has(typ string, want ...string) bool {
	for _, e := range es.of(typ) {
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(string(e.Event.Data), w)
		}
		if ok {
			return true
		}
	}
	return false
}

func (es convEvents) String() string {
	var b strings.Builder
	for _, e := range es {
		if strings.HasPrefix(e.Event.Type, "jido.agent.") {
			continue
		}
		fmt.Fprintf(&b, "%4d %-40s %-45s %s\n", e.Seq, e.Event.Type, e.Event.ID, e.Event.Data)
	}
	return b.String()
}

// assistantRig is one node and the CLI pointed at it; restart replaces the
// node on the same data dir.
type assistantRig struct {
	t       *testing.T
	dataDir string
	node    *Node
}

func (r *assistantRig) run(t *testing.T, args ...string) string {
	t.Helper()
	return tools.Run(t, append(args, "--nats-url", r.node.URL)...)
}

func (r *assistantRig) restart(t *testing.T) {
	t.Helper()
	r.node = StartNode(r.t, tools, r.dataDir)
}

// events reads conv's whole stream.
func (r *assistantRig) events(t *testing.T, conv string) convEvents {
	t.Helper()
	out := r.run(t, "log", "show", "conversation/"+conv, "--limit", "0", "-o", "json")
	var page struct {
		Entries convEvents `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("log show conversation/%s: %v\n%s", conv, err, out)
	}
	return page.Entries
}

// await polls conv's stream until cond holds, and returns it.
func (r *assistantRig) await(t *testing.T, conv, what string, cond func(convEvents) bool) convEvents {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		es := r.events(t, conv)
		if cond(es) {
			return es
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out waiting for %s; the log holds:\n%s", conv, what, es)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// awaitAnswer waits for the assistant message whose text is text, the end
// of a turn, and fails at once if the turn ends another way.
func (r *assistantRig) awaitAnswer(t *testing.T, conv, text string) convEvents {
	t.Helper()
	want, _ := json.Marshal(text)
	return r.await(t, conv, "the answer "+string(want), func(es convEvents) bool {
		return es.has("conversation.assistant.message", `"text":`+string(want))
	})
}

// newAssistantProject writes a project folder with the scripted model
// playing script (one JSON object per line), files and, when policy is not
// empty, .jido/policy.yaml; opens it as id and returns its root.
func (r *assistantRig) newAssistantProject(t *testing.T, id, policy string, script []string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), id)
	tree := map[string]string{
		".jido/config.yaml":  "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n",
		".jido/script.jsonl": strings.Join(script, "\n") + "\n",
	}
	if policy != "" {
		tree[".jido/policy.yaml"] = policy
	}
	for k, v := range files {
		tree[k] = v
	}
	writeProjectTree(t, root, tree)
	r.run(t, "project", "open", root, "--id", id)
	return root
}

// startConv starts conversation id of project and returns "project/id".
func (r *assistantRig) startConv(t *testing.T, project, id string) string {
	t.Helper()
	r.run(t, "conv", "start", project, "--id", id)
	return project + "/" + id
}

// TestAssistant drives the assistant through the real binary on the
// scripted provider: tools that edit the project, a path escape refused
// and shown to the model, approvals, kill -9 during a tool, a stream and a
// pending approval, and a replay of every conversation that decides again
// what the log recorded.
func TestAssistant(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	var convs []string // every conversation, for the replay at the end

	t.Run("read_edit_escape", func(t *testing.T) {
		outside := t.TempDir()
		writeProjectTree(t, outside, map[string]string{"secret.txt": "TOP SECRET\n"})
		root := rig.newAssistantProject(t, "edit", "", []string{
			`{"text":"Let me read it.","tool_calls":[{"id":"r1","name":"read_file","args":{"path":"notes.txt"}}],"usage":{"input_tokens":11,"output_tokens":7}}`,
			`{"text":"Now the edit.","tool_calls":[{"id":"e1","name":"edit_file","args":{"path":"notes.txt","old_string":"old","new_string":"new"}}],"usage":{"input_tokens":21,"output_tokens":8}}`,
			`{"text":"And the files next door.","tool_calls":[{"id":"x1","name":"read_file","args":{"path":"../outside.txt"}},{"id":"x2","name":"read_file","args":{"path":"escape/secret.txt"}}],"usage":{"input_tokens":31,"output_tokens":9}}`,
			`{"text":"Edited notes.txt; the other files are out of my reach.","usage":{"input_tokens":41,"output_tokens":10}}`,
		}, map[string]string{"notes.txt": "the old text\n"})
		writeProjectTree(t, filepath.Dir(root), map[string]string{"outside.txt": "NEXT DOOR\n"})
		if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
			t.Fatal(err)
		}
		conv := rig.startConv(t, "edit", "c1")
		convs = append(convs, conv)
		rig.run(t, "conv", "send", conv, "fix the notes")
		es := rig.awaitAnswer(t, conv, "Edited notes.txt; the other files are out of my reach.")

		if b, err := os.ReadFile(filepath.Join(root, "notes.txt")); err != nil || string(b) != "the new text\n" {
			t.Errorf("notes.txt after the turn: %q %v, want the edit", b, err)
		}
		if !es.has("conversation.tool.completed", `"call_id":"r1"`, "the old text") ||
			len(es.call("conversation.tool.completed", "e1")) != 1 {
			t.Errorf("read_file r1 and edit_file e1 did not both complete:\n%s", es)
		}
		for _, id := range []string{"x1", "x2"} {
			f := es.call("conversation.tool.failed", id)
			if len(f) != 1 || !strings.Contains(string(f[0].Event.Data), "outside_root") {
				t.Errorf("the escape %s is not one conversation.tool.failed outside_root:\n%s", id, es)
			}
			if len(es.call("conversation.tool.completed", id)) != 0 {
				t.Errorf("the escape %s completed:\n%s", id, es)
			}
		}
		all := fmt.Sprint(es)
		for _, secret := range []string{"TOP SECRET", "NEXT DOOR"} {
			if strings.Contains(all, secret) {
				t.Errorf("the log holds %q from outside the root:\n%s", secret, all)
			}
		}
		// The turn went on after the refusals: a fourth LLM call answered.
		if n := len(es.of("conversation.llm.completed")); n != 4 {
			t.Errorf("%d llm.completed, want 4 (the turn must go on after the refusals):\n%s", n, es)
		}
		for _, c := range es.of("conversation.llm.completed") {
			var d struct {
				Usage struct {
					InputTokens  int `json:"input_tokens"`
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(c.Event.Data, &d); err != nil || d.Usage.InputTokens == 0 || d.Usage.OutputTokens == 0 {
				t.Errorf("llm.completed at seq %d carries no usage: %s", c.Seq, c.Event.Data)
			}
		}

		// The timeline shows both calls and their results.
		tl := rig.run(t, "conv", "show", conv)
		for _, want := range []string{"r1 read_file", "e1 edit_file", "x1 read_file", "completed", "the old text", "outside_root"} {
			if !strings.Contains(tl, want) {
				t.Errorf("the timeline shows no %q:\n%s", want, tl)
			}
		}
		// The model's context holds the refusal.
		if ctx := rig.run(t, "conv", "show", conv, "--view", "llm_context", "-o", "json"); !strings.Contains(ctx, "outside_root") {
			t.Errorf("the llm_context does not tell the model of the refusal:\n%s", ctx)
		}
	})
}
