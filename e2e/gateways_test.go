package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a token to every request of an SDK client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestGatewaysThroughTheBinary: a node serving --http with a token, a
// project whose model is scripted; the go-sdk client over streamable HTTP
// lists the project's tools, reads a file, is refused a path escape
// (isError) and hears tools/list_changed after a command is added; the
// a2a-go client fetches the card, streams a task the model answers with a
// tool call to completion, and cancels a second one. Every request is in
// the project's stream.
func TestGatewaysThroughTheBinary(t *testing.T) {
	const token = "e2e-gateways-token-77c2"
	t.Setenv("JIDO_E2E_GW_TOKEN", token)
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{
		"a.txt":                   "hello world\n",
		".jido/commands/hello.md": "---\ndescription: Say hello.\n---\nHello $ARGUMENTS\n",
		".jido/config.yaml":       "llm:\n  provider: scripted\n  model: demo\n  script: .jido/script.jsonl\n",
		// Each conversation plays the script from its start: a read_file
		// call, then a slow answer (so the second task can be cancelled
		// while it streams).
		".jido/script.jsonl": `{"tool_calls":[{"name":"read_file","args":{"path":"a.txt"}}]}
{"text":"a.txt says hello world; that is all it says, slowly.","chunk":4,"delay_ms":80}
`,
	})
	node := StartNode(t, tools, t.TempDir(), "--http", "127.0.0.1:0", "--http-token-env", "JIDO_E2E_GW_TOKEN", "--open", proj+"=gw")
	base := httpBase(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := &http.Client{Transport: bearer{token, http.DefaultTransport}}

	t.Run("mcp", func(t *testing.T) {
		changed := make(chan struct{}, 8)
		c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, &sdk.ClientOptions{
			ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
		})
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp/gw", HTTPClient: client}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		mcpReadAndEscape(t, ctx, cs, "a.txt", "hello world")
		// A new command is a new tool and a new prompt: the client hears it.
		if err := os.WriteFile(filepath.Join(proj, ".jido/commands/bye.md"), []byte("---\ndescription: Say bye.\n---\nBye $ARGUMENTS\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("no tools/list_changed after a command was added")
		}
	})

	t.Run("a2a", func(t *testing.T) {
		card, err := agentcard.NewResolver(client).Resolve(ctx, base+"/a2a/gw")
		if err != nil {
			t.Fatal(err)
		}
		if card.Name != "gw" || !card.Capabilities.Streaming {
			t.Fatalf("card %+v", card)
		}
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(client))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Destroy()
		var state a2a.TaskState
		var answer string
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("what does a.txt say?"))}) {
			if err != nil {
				t.Fatal(err)
			}
			switch e := ev.(type) {
			case *a2a.TaskStatusUpdateEvent:
				state = e.Status.State
			case *a2a.TaskArtifactUpdateEvent:
				// A2A's artifact rules: without append an update writes
				// the artifact, with append it adds to it.
				if !e.Append {
					answer = ""
				}
				answer += e.Artifact.Parts[0].Text()
			}
		}
		if state != a2a.TaskStateCompleted || !strings.Contains(answer, "hello world") {
			t.Fatalf("the task ended %s with %q", state, answer)
		}
		// A second task, cancelled while its answer streams.
		var id a2a.TaskID
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("again"))}) {
			if err != nil {
				t.Fatal(err)
			}
			switch e := ev.(type) {
			case *a2a.Task:
				id = e.ID
			case *a2a.TaskArtifactUpdateEvent:
				if id != "" {
					if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil {
						t.Fatal(err)
					}
					id = ""
				}
			case *a2a.TaskStatusUpdateEvent:
				state = e.Status.State
			}
		}
		if state != a2a.TaskStateCanceled {
			t.Fatalf("the second task ended %s, want canceled", state)
		}
	})

	out := tools.Run(t, "log", "show", "project/gw", "--type", "project.gateway.request", "-o", "json", "--nats-url", node.URL)
	for _, want := range []string{`"mcp"`, `"tools/call"`, `"outside_root"`, `"a2a"`, `"tasks/cancel"`, `"JIDO_E2E_GW_TOKEN"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the project's stream has no gateway request with %s:\n%s", want, out)
		}
	}
}

// mcpReadAndEscape checks an MCP session of a project: read_file is
// listed, reading file gives want, and a path escape is isError
// outside_root.
func mcpReadAndEscape(t *testing.T, ctx context.Context, cs *sdk.ClientSession, file, want string) {
	t.Helper()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(" "+strings.Join(names, " ")+" ", " read_file ") {
		t.Fatalf("tools %v: want read_file", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": file}})
	if err != nil || res.IsError {
		t.Fatalf("read_file: %+v %v", res, err)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), want) {
		t.Errorf("read_file gave %s, want %q in it", b, want)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../../../etc/passwd"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "outside_root") {
		t.Fatalf("a path escape: %+v %v, want isError outside_root", res, err)
	}
}
