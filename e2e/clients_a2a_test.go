package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// a2aClientScript is what the scripted model answers, in order, in each
// conversation: a sentence and a read_file call, the answer, the answer
// to a second task in the same context, then a slow sentence with a tool
// call and a slow answer (a client can leave and come back meanwhile).
const a2aClientScript = `{"text":"Let me read a.txt first.","chunk":5,"tool_calls":[{"name":"read_file","args":{"path":"a.txt"}}]}
{"text":"a.txt says hello; that is all it holds.","chunk":6}
{"text":"A second task in the same context.","chunk":7}
{"text":"Now a slow look at a.txt, written one piece at a time.","chunk":4,"delay_ms":60,"tool_calls":[{"name":"read_file","args":{"path":"a.txt"}}]}
{"text":"Still hello: a.txt has not changed, and this answer streams slowly too.","chunk":4,"delay_ms":60}
`

// a2aClientNode starts a node serving project js (the script above, and
// a command) on loopback, with token unless it is "", and returns its
// HTTP base URL.
func a2aClientNode(t *testing.T, token string) string {
	t.Helper()
	args := []string{"--http", "127.0.0.1:0"}
	if token != "" {
		t.Setenv("JIDO_E2E_A2A_TOKEN", token)
		args = append(args, "--http-token-env", "JIDO_E2E_A2A_TOKEN")
	}
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{
		"a.txt":                     "hello\n",
		".jido/commands/explain.md": "---\ndescription: Explain a file\n---\nExplain $1.\n",
		".jido/config.yaml":         "llm:\n  provider: scripted\n  model: demo\n  script: .jido/script.jsonl\n",
		".jido/script.jsonl":        a2aClientScript,
	})
	node := StartNode(t, tools, t.TempDir(), append(args, "--open", proj+"=js")...)
	return httpBase(t, node)
}

// a2aTask is a task as e2e/testdata/a2a-client/client.cjs reports it:
// text parts joined, messages with data parts (tool calls) left out.
type a2aTask struct {
	Error      string `json:"error"`
	ID         string `json:"id"`
	ContextID  string `json:"contextId"`
	State      string `json:"state"`
	StatusText string `json:"statusText"`
	Artifacts  []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"artifacts"`
	History []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"history"`
}

// a2aStream is what one stream sent, and the task the SDK's task manager
// folded from it.
type a2aStream struct {
	Error   string `json:"error"`
	ID      string `json:"id"`
	Updates []struct {
		ID     string `json:"id"`
		Append bool   `json:"append"`
		Last   bool   `json:"last"`
		Text   string `json:"text"`
	} `json:"updates"`
	Statuses []struct {
		State string `json:"state"`
		Text  string `json:"text"`
	} `json:"statuses"`
	Folded a2aTask `json:"folded"`
}

// a2aReport is what client.cjs saw.
type a2aReport struct {
	Card struct {
		Error           string                                `json:"error"`
		Name            string                                `json:"name"`
		Skills          []string                              `json:"skills"`
		SecuritySchemes map[string]map[string]json.RawMessage `json:"securitySchemes"`
		Security        json.RawMessage                       `json:"security"`
		Extended        bool                                  `json:"extended"`
	} `json:"card"`
	ExtendedCard struct {
		Error  string   `json:"error"`
		Skills []string `json:"skills"`
	} `json:"extended_card"`
	Stream           a2aStream `json:"stream"`
	Get              a2aTask   `json:"get"`
	FollowUp         a2aTask   `json:"follow_up"`
	GetAfterFollowUp a2aTask   `json:"get_after_follow_up"`
	SendToEnded      a2aTask   `json:"send_to_ended"`
	SubscribeToEnded struct {
		Error string `json:"error"`
	} `json:"subscribe_to_ended"`
	Left         a2aStream `json:"left"`
	Resubscribed a2aStream `json:"resubscribed"`
	GetSlow      a2aTask   `json:"get_slow"`
}

// runA2AClient runs client.cjs of SDK line (0.3 or 1) against the agent
// at url and decodes its report. It skips the test only when node is not
// installed.
func runA2AClient(t *testing.T, line, url, token string) a2aReport {
	t.Helper()
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: this test drives the A2A gateway with the official A2A JavaScript SDK, which needs Node.js 18 or later; install it and run make tools")
	}
	if checkoutRootErr != nil {
		t.Fatal(checkoutRootErr)
	}
	modules := filepath.Join(checkoutRoot, "bin", "a2a-client")
	for _, pkg := range []string{"a2a-sdk-0.3", "a2a-sdk-1"} {
		if _, err := os.Stat(filepath.Join(modules, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the A2A JavaScript SDK is not installed in %s: run make tools (it runs npm ci for e2e/testdata/a2a-client there)", modules)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, filepath.Join(checkoutRoot, "e2e", "testdata", "a2a-client", "client.cjs"), line, url)
	cmd.Env = append(os.Environ(), "JIDO_A2A_MODULES="+modules, "JIDO_A2A_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the A2A JavaScript client (%s): %v\n%s", line, err, stderr.String())
	}
	var r a2aReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("the A2A JavaScript client's report: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("the %s client's report: %s", line, stdout.String())
	return r
}

// TestA2AJavaScriptClients (issue 21, items 13, 15 and 16): the official
// A2A JavaScript SDK clients of the 0.3 line and of the 1.0 line, given
// only the project's A2A URL, find the card without a token (it lists no
// skills but says how to authenticate, in a form each version reads; the
// extended card behind the token lists command_explain); a streamed task
// folded by the SDK's own task manager ends with exactly the artifacts
// and messages GetTask returns (each answer of the model its own
// artifact, the text before the tool call in the history); a second
// message in the context is a second task and the first stays as it
// ended; a message to the ended task is refused naming the contextId;
// errors name the client's own methods; and a client that leaves a slow
// task mid-answer and subscribes again ends with exactly what GetTask
// returns. On loopback without a token (a developer's machine) the card
// is whole, and the rest the same.
func TestA2AJavaScriptClients(t *testing.T) {
	for _, token := range []string{"e2e-a2a-js-token-5d1e", ""} {
		base := a2aClientNode(t, token)
		for _, line := range []string{"0.3", "1"} {
			name := line + " with a token"
			if token == "" {
				name = line + " without a token"
			}
			t.Run(name, func(t *testing.T) {
				r := runA2AClient(t, line, base+"/a2a/js/", token)
				checkA2AReport(t, line, token != "", r)
			})
		}
	}
}

func checkA2AReport(t *testing.T, line string, withToken bool, r a2aReport) {
	t.Helper()
	if r.Card.Error != "" {
		t.Fatalf("the card, from the agent's URL and without a token: %s", r.Card.Error)
	}
	if r.ExtendedCard.Error != "" || !slices.Contains(r.ExtendedCard.Skills, "command_explain") || slices.ContainsFunc(r.ExtendedCard.Skills, func(s string) bool { return strings.Contains(s, ".") }) {
		t.Errorf("the whole card: %+v, want the skill command_explain", r.ExtendedCard)
	}
	if !withToken {
		if r.Card.Name != "js" || !slices.Equal(r.Card.Skills, r.ExtendedCard.Skills) || r.Card.Extended || len(r.Card.SecuritySchemes) != 0 {
			t.Errorf("the card where no token is needed: %+v, want it whole, without security", r.Card)
		}
	} else {
		if r.Card.Name != "js" || len(r.Card.Skills) != 0 || !r.Card.Extended {
			t.Errorf("the public card: name %q, skills %v, extended %v; want js, none, an extended card", r.Card.Name, r.Card.Skills, r.Card.Extended)
		}
		bearer := r.Card.SecuritySchemes["bearer"]
		if string(bearer["type"]) != `"http"` || string(bearer["scheme"]) != `"Bearer"` || bearer["httpAuthSecurityScheme"] == nil {
			t.Errorf("the card's bearer scheme %v: want its 0.3 form (type http, scheme Bearer) beside its 1.0 form", bearer)
		}
		if !strings.Contains(string(r.Card.Security), "bearer") {
			t.Errorf("the card's security requirements %s: want the bearer scheme", r.Card.Security)
		}
	}

	// Item 13: the stream folds into exactly the task GetTask returns.
	s, got := r.Stream, r.Get
	if s.Error != "" || got.Error != "" {
		t.Fatalf("stream: %q, get: %q", s.Error, got.Error)
	}
	sameTask(t, "the stream folded", s.Folded, got)
	if got.State != "completed" || len(got.Artifacts) != 2 || got.Artifacts[0].Text != "Let me read a.txt first." || got.Artifacts[1].Text != "a.txt says hello; that is all it holds." {
		t.Errorf("GetTask: %+v, want completed with the sentence before the tool call and the answer, one artifact each", got)
	}
	if texts := historyTexts(got); !slices.Equal(texts, []string{"user: What does a.txt say?", "agent: Let me read a.txt first.", "agent: a.txt says hello; that is all it holds."}) {
		t.Errorf("GetTask's history %q: want the question, the text before the tool call, the answer", texts)
	}
	for _, u := range s.Updates {
		if u.Append && strings.HasPrefix(u.Text, "a.txt says hello;") || u.Append && u.Text == "Let me read a.txt first." {
			t.Errorf("an update appends a whole answer again: %+v", u)
		}
	}

	// Item 16: a second message in the context is a new task; the first
	// does not change.
	f := r.FollowUp
	if f.Error != "" || f.ID != got.ID+":2" || f.ContextID != got.ContextID || f.State != "completed" {
		t.Errorf("the follow-up in the context: %+v, want task %s:2 of context %s, completed", f, got.ID, got.ContextID)
	}
	if texts := historyTexts(f); !slices.Equal(texts, []string{"user: And a second question?", "agent: A second task in the same context."}) {
		t.Errorf("the second task's history %q: want its own messages only", texts)
	}
	sameTask(t, "the first task after the follow-up", r.GetAfterFollowUp, got)
	if e := r.SendToEnded.Error; !strings.Contains(e, "has ended") || !strings.Contains(e, "contextId "+got.ContextID) {
		t.Errorf("a message to the ended task: %+v, want it refused naming the contextId", r.SendToEnded)
	}
	// Item 15: errors name the client's own methods.
	wantGet, otherGet := "GetTask", "tasks/get"
	if line == "0.3" {
		wantGet, otherGet = otherGet, wantGet
	}
	if e := r.SubscribeToEnded.Error; !strings.Contains(e, wantGet+" reads it") || strings.Contains(e, otherGet) {
		t.Errorf("resubscribing to an ended task (%s client): %q, want it to name %s", line, e, wantGet)
	}

	// Item 13 after SubscribeToTask: the client left mid-answer.
	left, back, slow := r.Left, r.Resubscribed, r.GetSlow
	if left.Error != "" || back.Error != "" || slow.Error != "" {
		t.Fatalf("left: %q, resubscribed: %q, get: %q", left.Error, back.Error, slow.Error)
	}
	if left.ID != got.ID+":3" || len(left.Updates) == 0 {
		t.Errorf("the slow task: %+v, want task %s:3 and a first piece of its answer", left, got.ID)
	}
	sameTask(t, "the stream folded after SubscribeToTask", back.Folded, slow)
	if slow.State != "completed" || len(slow.Artifacts) != 2 || !strings.HasPrefix(slow.Artifacts[1].Text, "Still hello:") {
		t.Errorf("GetTask of the slow task: %+v", slow)
	}
}

// sameTask fails unless the task a client folded is the one GetTask
// returned: state, artifacts (ids and text) and messages.
func sameTask(t *testing.T, what string, folded, got a2aTask) {
	t.Helper()
	if folded.ID != got.ID || folded.State != got.State || folded.StatusText != got.StatusText {
		t.Errorf("%s: task %s %s %q; GetTask: %s %s %q", what, folded.ID, folded.State, folded.StatusText, got.ID, got.State, got.StatusText)
	}
	fa, ga := artifactTexts(folded), artifactTexts(got)
	if !slices.Equal(fa, ga) {
		t.Errorf("%s: artifacts\n%q\nGetTask's:\n%q", what, fa, ga)
	}
	if fh, gh := historyTexts(folded), historyTexts(got); !slices.Equal(fh, gh) {
		t.Errorf("%s: history\n%q\nGetTask's:\n%q", what, fh, gh)
	}
}

func artifactTexts(t a2aTask) []string {
	var out []string
	for _, a := range t.Artifacts {
		out = append(out, a.ID+": "+a.Text)
	}
	return out
}

func historyTexts(t a2aTask) []string {
	var out []string
	for _, m := range t.History {
		out = append(out, m.Role+": "+m.Text)
	}
	return out
}

// TestA2ACardIsPublic (issue 21, item 15): on a node with a token, an
// agent's card is read without one, lists no skills and says how to
// authenticate; read with the token it lists them; a wrong token is
// still refused; every other request needs the token; a client given the
// URL without its trailing slash looks at /a2a/.well-known/agent-card.json
// and is told where the card is.
func TestA2ACardIsPublic(t *testing.T) {
	const token = "e2e-a2a-card-token-81f0"
	base := a2aClientNode(t, token)
	auth := map[string]string{"Authorization": "Bearer " + token}

	card := httpDo(t, "GET", base+"/a2a/js/.well-known/agent-card.json", "", nil)
	if card.code != http.StatusOK {
		t.Fatalf("the card without a token: %d %s", card.code, card.body)
	}
	var c struct {
		Skills          []struct{ ID string }     `json:"skills"`
		URL             string                    `json:"url"`
		SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
		Capabilities    struct {
			ExtendedAgentCard bool `json:"extendedAgentCard"`
		} `json:"capabilities"`
		SupportsAuthenticatedExtendedCard bool `json:"supportsAuthenticatedExtendedCard"`
	}
	if err := json.Unmarshal([]byte(card.body), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Skills) != 0 || !c.Capabilities.ExtendedAgentCard || !c.SupportsAuthenticatedExtendedCard || c.SecuritySchemes["bearer"]["type"] != "http" {
		t.Errorf("the public card: %s", card.body)
	}
	if c.URL != base+"/a2a/js/" {
		t.Errorf("the card's URL %q: want %s/a2a/js/, whose relative .well-known/agent-card.json is the card", c.URL, base)
	}
	whole := httpDo(t, "GET", base+"/a2a/js/.well-known/agent-card.json", "", auth)
	if whole.code != http.StatusOK || !strings.Contains(whole.body, `"command_explain"`) || strings.Contains(whole.body, "command.explain") {
		t.Errorf("the card with the token: %d %s, want the skill command_explain", whole.code, whole.body)
	}
	if wrong := httpDo(t, "GET", base+"/a2a/js/.well-known/agent-card.json", "", map[string]string{"Authorization": "Bearer wrong"}); wrong.code != http.StatusUnauthorized {
		t.Errorf("the card with a wrong token: %d %s, want 401", wrong.code, wrong.body)
	}
	for _, req := range []struct{ method, path, body string }{
		{"POST", "/a2a/js/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`},
		{"POST", "/a2a/js/.well-known/agent-card.json", `{}`},
		{"GET", "/a2a/js", ""},
		{"GET", "/mcp/js", ""},
	} {
		if a := httpDo(t, req.method, base+req.path, req.body, nil); a.code != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d %s, want 401", req.method, req.path, a.code, a.body)
		}
	}
	misplaced := httpDo(t, "GET", base+"/a2a/.well-known/agent-card.json", "", nil)
	var refusal struct{ Error struct{ Message string } }
	_ = json.Unmarshal([]byte(misplaced.body), &refusal)
	if misplaced.code != http.StatusNotFound || !strings.Contains(refusal.Error.Message, "/a2a/<project-id>/.well-known/agent-card.json") {
		t.Errorf("the card where a client given the URL without its slash looks: %d %s, want 404 saying where it is", misplaced.code, misplaced.body)
	}
}

// TestA2AGoClients (issue 21, items 13 and 16, for the SDK the gateway
// is built on): the a2a-go client, given the agent's URL with or without
// its trailing slash, finds the card; a stream folded by A2A's artifact
// rules ends with exactly GetTask's artifacts; a second message in the
// context is a second task; and a 0.3 client of a2a-go (its compatibility
// transport) gets the same.
func TestA2AGoClients(t *testing.T) {
	const token = "e2e-a2a-go-token-2b7c"
	base := a2aClientNode(t, token)
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, url := range []string{base + "/a2a/js", base + "/a2a/js/"} {
		if _, err := agentcard.DefaultResolver.Resolve(ctx, url); err != nil {
			t.Errorf("the card from %s, without a token: %v", url, err)
		}
	}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base+"/a2a/js/")
	if err != nil {
		t.Fatal(err)
	}
	var v0 *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolVersion == a2av0.Version {
			v0 = i
		}
	}
	if v0 == nil || len(card.Skills) != 1 || card.Skills[0].ID != "command_explain" {
		t.Fatalf("the card read with the token: interfaces %+v, skills %+v", card.SupportedInterfaces, card.Skills)
	}
	c10, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c10.Destroy() }()
	c03, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{v0}, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c03.Destroy() }()
	for name, c := range map[string]*a2aclient.Client{"1.0": c10, "0.3": c03} {
		t.Run(name, func(t *testing.T) {
			var fold a2aGoFold
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What does a.txt say?"))}) {
				if err != nil {
					t.Fatal(err)
				}
				fold.apply(t, ev)
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: fold.task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if f, g := goArtifactTexts(fold.task), goArtifactTexts(got); !slices.Equal(f, g) || len(g) != 2 || fold.task.Status.State != got.Status.State {
				t.Errorf("the stream folded to %s %q; GetTask: %s %q", fold.task.Status.State, f, got.Status.State, g)
			}
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("And a second question?"))
			msg.ContextID = got.ContextID
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			if err != nil {
				t.Fatal(err)
			}
			second, ok := res.(*a2a.Task)
			if !ok || string(second.ID) != string(got.ID)+":2" || second.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("a second message in the context: %#v, want task %s:2, completed", res, got.ID)
			}
			again, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: got.ID})
			if err != nil || again.Status.State != a2a.TaskStateCompleted || len(again.History) != len(got.History) {
				t.Errorf("the first task after the second: %+v %v, want it as it ended", again, err)
			}
		})
	}
}

// a2aGoFold applies a stream's events to a task as the SDKs' task
// managers do: an artifact update without append adds the artifact or
// replaces the one of its id, one with append adds its parts to it (to
// one never created is an error: the Go SDK's manager refuses it, the
// Python one drops the chunk).
type a2aGoFold struct{ task *a2a.Task }

func (f *a2aGoFold) apply(t *testing.T, ev a2a.Event) {
	t.Helper()
	switch e := ev.(type) {
	case *a2a.Task:
		f.task = e
	case *a2a.TaskStatusUpdateEvent:
		f.task.Status = e.Status
	case *a2a.TaskArtifactUpdateEvent:
		i := slices.IndexFunc(f.task.Artifacts, func(a *a2a.Artifact) bool { return a.ID == e.Artifact.ID })
		switch {
		case !e.Append && i < 0:
			f.task.Artifacts = append(f.task.Artifacts, e.Artifact)
		case !e.Append:
			f.task.Artifacts[i] = e.Artifact
		case i < 0:
			t.Errorf("an update appends to artifact %s, never created", e.Artifact.ID)
		default:
			a := *f.task.Artifacts[i]
			a.Parts = append(slices.Clone(a.Parts), e.Artifact.Parts...)
			f.task.Artifacts[i] = &a
		}
	}
}

func goArtifactTexts(t *a2a.Task) []string {
	var out []string
	for _, a := range t.Artifacts {
		var text strings.Builder
		for _, p := range a.Parts {
			text.WriteString(p.Text())
		}
		out = append(out, string(a.ID)+": "+text.String())
	}
	return out
}
