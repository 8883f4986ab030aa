package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// chatMessage is a message of a Chat Completions request.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// text is the message's content when it is a string.
func (m chatMessage) text() string {
	var s string
	_ = json.Unmarshal(m.Content, &s)
	return s
}

// strictModel is an OpenAI-compatible server that checks a request's
// history the way OpenAI's does: every tool message answers a tool call of
// the assistant message right before it (only tool messages between), and
// every tool call is answered before the next other message; anything else
// is 400, as OpenAI, vLLM and llama.cpp answer it. It records every
// request, answers by what the last message asks, and refuses a history
// holding "POISON" (a message a server cannot take) and a request for
// "overload" (503).
type strictModel struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    [][]chatMessage
	refused []string
}

func newStrictModel(t *testing.T) *strictModel {
	t.Helper()
	m := &strictModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *strictModel) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []chatMessage `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not a chat completion"}}`, http.StatusNotFound)
		return
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, req.Messages)
	m.mu.Unlock()
	refuse := func(status int, msg string) {
		m.mu.Lock()
		m.refused = append(m.refused, msg)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
		_, _ = w.Write(b)
	}
	if err := checkHistory(req.Messages); err != "" {
		refuse(http.StatusBadRequest, err)
		return
	}
	for i, msg := range req.Messages {
		if strings.Contains(msg.text(), "POISON") {
			refuse(http.StatusBadRequest, fmt.Sprintf("messages[%d]: this content cannot be processed", i))
			return
		}
	}
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == "user" && last.text() == "overload":
		refuse(http.StatusServiceUnavailable, "overloaded")
	case last.Role == "user" && last.text() == "write b":
		streamAnswer(w, "", "call_w1", "write_file", `{"path":"b.txt","content":"new"}`)
	case last.Role == "user" && last.text() == "read it sloppily":
		streamAnswer(w, "", "call_bad1", "read_file", `{"path": "a.txt"`)
	case last.Role == "user":
		streamAnswer(w, "ok: "+last.text(), "", "", "")
	default:
		streamAnswer(w, "done with "+last.ToolCallID, "", "", "")
	}
}

// checkHistory is "" or the 400 an OpenAI-compatible server answers.
func checkHistory(msgs []chatMessage) string {
	open := map[string]bool{} // calls of the assistant message being answered
	answering := false
	for i, m := range msgs {
		if m.Role == "tool" {
			if !answering || !open[m.ToolCallID] {
				return fmt.Sprintf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		}
		if len(open) > 0 {
			return fmt.Sprintf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; %d did not have response messages", i, len(open))
		}
		answering = m.Role == "assistant" && len(m.ToolCalls) > 0
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
	}
	if len(open) > 0 {
		return "the last assistant message's 'tool_calls' have no response messages"
	}
	return ""
}

// streamAnswer writes one answer as Chat Completions chunks (SSE): text,
// or one tool call.
func streamAnswer(w http.ResponseWriter, text, callID, name, args string) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if callID != "" {
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": callID, "type": "function",
			"function": map[string]any{"name": name, "arguments": args}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": text}, nil)
		chunk(map[string]any{}, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// requestsFor are the requests whose first user message is first.
func (m *strictModel) requestsFor(first string) [][]chatMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]chatMessage
	for _, r := range m.reqs {
		for _, msg := range r {
			if msg.Role == "user" {
				if msg.text() == first {
					out = append(out, r)
				}
				break
			}
		}
	}
	return out
}

func roleList(msgs []chatMessage) string {
	var rs []string
	for _, m := range msgs {
		rs = append(rs, m.Role)
	}
	return strings.Join(rs, " ")
}

// TestOpenAICompatibleClient (issue 21, items 14 and 18) drives the
// assistant through the binary against a model server that checks history
// as OpenAI's does:
//
//   - a message sent while a tool call waits for approval (the natural
//     reply to A2A's input-required) follows the call's result in the next
//     request, and later turns still work (the request was [user,
//     assistant(tool_calls), user, tool]: 400 at every later turn);
//   - a refused history says why and how to go on: the fork the error
//     names continues without the refused turn;
//   - the project's AGENTS.md is the system message without --system;
//   - arguments that were not JSON go back as the model sent them;
//   - the last failed attempt is not labelled retryable.
func TestOpenAICompatibleClient(t *testing.T) {
	model := newStrictModel(t)
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.node = StartNode(t, tools, rig.dataDir, "--provider", "local=openai,base_url="+model.URL+"/v1")
	root := filepath.Join(t.TempDir(), "oa")
	writeProjectTree(t, root, map[string]string{
		"a.txt":             "hello\n",
		"AGENTS.md":         "Answer in one short line.\n",
		".jido/config.yaml": "llm: {provider: local, model: m}\n",
		".jido/policy.yaml": "tools:\n  \"*\": allow\n  write_file: ask\n",
	})
	rig.run(t, "project", "open", root, "--id", "oa")
	// The failing model call retries with backoff: it runs meanwhile.
	rig.run(t, "conv", "send", "oa/c3", "overload")

	t.Run("message during approval", func(t *testing.T) {
		rig.run(t, "conv", "send", "oa/c1", "write b")
		rig.await(t, "oa/c1", "the approval request", func(es convEvents) bool {
			return len(es.of("conversation.tool.approval.requested")) > 0
		})
		rig.run(t, "conv", "send", "oa/c1", "and say so")
		rig.run(t, "conv", "approve", "oa/c1", "call_w1")
		es := rig.await(t, "oa/c1", "the answer or a failure", func(es convEvents) bool {
			return es.has("conversation.assistant.message", `ok: and say so`) || len(es.of("conversation.llm.failed")) > 0
		})
		if f := es.of("conversation.llm.failed"); len(f) > 0 {
			t.Fatalf("the model call after the approval failed: %s\n%s", f[0].Event.Data, es)
		}
		rig.run(t, "conv", "send", "oa/c1", "thanks")
		rig.await(t, "oa/c1", "the next turn's answer", func(es convEvents) bool {
			return es.has("conversation.assistant.message", `ok: thanks`) || len(es.of("conversation.llm.failed")) > 0
		})
		reqs := model.requestsFor("write b")
		if len(reqs) != 3 {
			t.Fatalf("%d requests for oa/c1, want 3", len(reqs))
		}
		if got := roleList(reqs[1]); got != "system user assistant tool user" {
			t.Errorf("the request after the approval: %s; want the message after the tool result", got)
		}
		if got := roleList(reqs[2]); got != "system user assistant tool user assistant user" {
			t.Errorf("the next turn's request: %s", got)
		}
		if es := rig.events(t, "oa/c1"); len(es.of("conversation.llm.failed")) > 0 {
			t.Errorf("oa/c1 has a failed model call:\n%s", es)
		}
	})

	t.Run("instructions", func(t *testing.T) {
		for _, r := range model.requestsFor("write b") {
			if r[0].Role != "system" || r[0].text() != "Answer in one short line." {
				t.Fatalf("the first message %s %q: want AGENTS.md as the system message", r[0].Role, r[0].text())
			}
		}
	})

	t.Run("arguments not JSON", func(t *testing.T) {
		rig.run(t, "conv", "send", "oa/c2", "read it sloppily")
		rig.await(t, "oa/c2", "the answer after the failed call", func(es convEvents) bool {
			return es.has("conversation.assistant.message", "done with call_bad1") || len(es.of("conversation.llm.failed")) > 0
		})
		reqs := model.requestsFor("read it sloppily")
		if len(reqs) != 2 || !strings.HasSuffix(roleList(reqs[1]), "user assistant tool") {
			t.Fatalf("%d requests for oa/c2, the last %s", len(reqs), roleList(reqs[len(reqs)-1]))
		}
		n := len(reqs[1])
		if got := reqs[1][n-2].ToolCalls[0].Function.Arguments; got != `{"path": "a.txt"` {
			t.Errorf("the call's arguments went back as %q, want them as the model sent them", got)
		}
		if got := reqs[1][n-1].text(); !strings.Contains(got, "invalid_args") || !strings.Contains(got, "not valid JSON") {
			t.Errorf("the call's result %q does not say what was wrong", got)
		}
	})

	t.Run("refused history", func(t *testing.T) {
		rig.run(t, "conv", "send", "oa/c4", "POISON here")
		es := rig.await(t, "oa/c4", "the refusal", func(es convEvents) bool { return len(es.of("conversation.llm.failed")) > 0 })
		msg := string(es.of("conversation.llm.failed")[0].Event.Data)
		if !strings.Contains(msg, "this content cannot be processed") {
			t.Errorf("the failure does not say the server's reason: %s", msg)
		}
		fork := regexp.MustCompile(`jido-bus conv fork oa/c4 --at (\d+)`).FindStringSubmatch(msg)
		if fork == nil {
			t.Fatalf("the failure does not say how to go on: %s", msg)
		}
		out := rig.run(t, "conv", "fork", "oa/c4", "--at", fork[1], "--as", "oa/c4b")
		if !strings.Contains(out, "into oa/c4b") {
			t.Fatalf("conv fork: %s", out)
		}
		rig.run(t, "conv", "send", "oa/c4b", "hello again")
		es = rig.await(t, "oa/c4b", "the fork's answer", func(es convEvents) bool {
			return es.has("conversation.assistant.message", "ok: hello again") || len(es.of("conversation.llm.failed")) > 0
		})
		if f := es.of("conversation.llm.failed"); len(f) > 0 {
			t.Fatalf("the fork failed too: %s", f[0].Event.Data)
		}
	})

	t.Run("last attempt", func(t *testing.T) {
		es := rig.await(t, "oa/c3", "the five attempts", func(es convEvents) bool { return len(es.of("conversation.llm.failed")) == 5 })
		for i, f := range es.of("conversation.llm.failed") {
			var d struct {
				Retryable bool `json:"retryable"`
			}
			_ = json.Unmarshal(f.Event.Data, &d)
			if last := i == 4; d.Retryable == last {
				t.Errorf("attempt %d: retryable %v", i+1, d.Retryable)
			}
		}
		out := rig.run(t, "conv", "show", "oa/c3")
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "attempt 5") && strings.Contains(line, "retryable") {
				t.Errorf("conv show labels the last attempt retryable: %s", line)
			}
		}
		if !strings.Contains(out, "given up after 5 attempts") {
			t.Errorf("conv show does not say the call was given up:\n%s", out)
		}
	})

	model.mu.Lock()
	defer model.mu.Unlock()
	for _, r := range model.refused {
		if strings.Contains(r, "role 'tool'") || strings.Contains(r, "tool_calls") {
			t.Errorf("the server refused a history: %s", r)
		}
	}
}
