package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// Who may do what, through the binary (issue 20, items 10–13): where a
// project may be opened, who owns an A2A task, who may start a
// conversation under a project's id, and how much of the HTTP door one
// token may hold.

// TestAccessNestedRootsThroughTheBinary: `project open` of a folder inside
// an open project's root, or of one holding it, is refused in either
// order (the outer project's write_file rewrote the inner one's
// .jido/config.yaml and commands); so are the node user's home folder
// and, where the test may mount, the open root under another path (a
// bind mount).
func TestAccessNestedRootsThroughTheBinary(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home) // the node's, as serve inherits the environment
	node := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + node.URL}
	outer := t.TempDir()
	inner := filepath.Join(outer, "sub", "inner")
	writeProjectTree(t, inner, map[string]string{".jido/commands/hello.md": "Hello $ARGUMENTS\n"})

	refused := func(want string, args ...string) {
		t.Helper()
		r := runCLI(t, env, args...)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("jido-bus %s: exit %d, %s%s\nwant a refusal saying %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, want)
		}
	}
	runCLI(t, env, "project", "open", outer, "--id", "outer").must(t, "project open outer")
	refused("inside the root", "project", "open", inner, "--id", "inner")
	runCLI(t, env, "project", "close", "outer").must(t, "project close outer")
	runCLI(t, env, "project", "open", inner, "--id", "inner").must(t, "project open inner")
	refused("holds the root", "project", "open", outer, "--id", "outer")
	refused("home folder", "project", "open", home, "--id", "home")

	// The same folder through a bind mount, where the test may mount.
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", inner, mnt).CombinedOutput(); err != nil {
		t.Logf("no bind mount here (%v: %s): run as root on Linux to test it", err, out)
		return
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	refused("same folder", "project", "open", mnt, "--id", "again")
}

// a2aAs is an A2A client of project p1 sending token.
func a2aAs(t *testing.T, ctx context.Context, base, token string) *a2aclient.Client {
	t.Helper()
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base+"/a2a/p1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// TestAccessA2ATasksPerTokenThroughTheBinary: two tokens of project p1;
// the task bot-a starts does not exist for bot-b (get, cancel, follow,
// continue are task_not_found, as for a task never started), while
// bot-a and the admin token (--http-token-env) read it.
func TestAccessA2ATasksPerTokenThroughTheBinary(t *testing.T) {
	t.Setenv("JIDO_E2E_ACCESS_ADMIN", "e2e-access-admin-token-01")
	t.Setenv("JIDO_E2E_ACCESS_A", "e2e-access-bot-a-token-02")
	t.Setenv("JIDO_E2E_ACCESS_B", "e2e-access-bot-b-token-03")
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{
		"a.txt":              "hello world\n",
		".jido/config.yaml":  "llm:\n  provider: scripted\n  model: demo\n  script: .jido/script.jsonl\n",
		".jido/script.jsonl": `{"text":"a.txt says hello world"}` + "\n",
	})
	cfg := writeFile(t, "jido.yaml", `http:
  listen: 127.0.0.1:0
  token_env: JIDO_E2E_ACCESS_ADMIN
  tokens:
    - {name: bot-a, env: JIDO_E2E_ACCESS_A, project: p1}
    - {name: bot-b, env: JIDO_E2E_ACCESS_B, project: p1}
`)
	node := StartNode(t, tools, t.TempDir(), "--config", cfg, "--open", proj+"=p1")
	base := httpBase(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a := a2aAs(t, ctx, base, "e2e-access-bot-a-token-02")
	b := a2aAs(t, ctx, base, "e2e-access-bot-b-token-03")
	admin := a2aAs(t, ctx, base, "e2e-access-admin-token-01")

	res, err := a.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("my secret question"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("bot-a's task: %#v", res)
	}
	id := task.ID

	if got, err := b.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bot-b reads bot-a's task: %+v %v, want task not found", got, err)
	}
	if _, err := b.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bot-b cancels bot-a's task: %v, want task not found", err)
	}
	for ev, err := range b.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("bot-b follows bot-a's task: %v %v, want task not found", ev, err)
		}
		break
	}
	cont := &a2a.Message{ID: "m-b", Role: a2a.MessageRoleUser, TaskID: id, Parts: a2a.ContentParts{a2a.NewTextPart("and now mine")}}
	if _, err := b.SendMessage(ctx, &a2a.SendMessageRequest{Message: cont}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bot-b continues bot-a's task: %v, want task not found", err)
	}
	if got, err := a.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil || len(got.History) != 2 {
		t.Fatalf("bot-a reads its task: %+v %v, want its question and the answer", got, err)
	}
	if got, err := admin.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil || got.ID != id {
		t.Fatalf("the admin token reads bot-a's task: %+v %v", got, err)
	}
	// bot-b's tries are in the project's stream, refused.
	out := tools.Run(t, "log", "show", "project/p1", "--type", "project.gateway.request", "-o", "json", "--nats-url", node.URL)
	if !strings.Contains(out, `"bot-b"`) || !strings.Contains(out, `"not_found"`) {
		t.Errorf("the project's stream lacks bot-b's refused requests:\n%s", out)
	}
}

// a2aGetRaw asks for task id of project with a plain JSON-RPC GetTask.
func a2aGetRaw(t *testing.T, base, project, id string) string {
	t.Helper()
	return httpDo(t, "POST", base+"/a2a/"+project, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`"}}`,
		map[string]string{"Content-Type": "application/json"}).body
}

// forge sends a model's answer to conversation key on its subject, as a
// client would, and returns the node's reply.
func forge(t *testing.T, node *Node, key string) map[string]any {
	t.Helper()
	out, err := node.TryNATS("req", "--raw", "jido.agent."+key+".conversation.assistant.message", `{"text":"FORGED answer"}`,
		"-H", "ce-specversion:1.0", "-H", "ce-id:forged-1", "-H", "ce-source:assistant", "-H", "ce-type:conversation.assistant.message",
		"-H", "ce-causationid:u1", "-H", "content-type:application/json")
	if err != nil {
		t.Fatalf("forge an answer to %s: %v", key, err)
	}
	return reply(t, out)
}

// TestAccessGhostConversationThroughTheBinary: `conv send ghost/c1` before
// project ghost is open starts nothing, so no forged answer can be put in
// it; once ghost opens, conv ls, conv show and A2A GetTask show none. A
// conversation an operator started under ghost2's id before it opened
// (as an older node's conv send did), with a forged answer in it, is
// stopped when ghost2 opens: no more forged answers, no message, no A2A
// task, and ghost2's stream says why.
func TestAccessGhostConversationThroughTheBinary(t *testing.T) {
	node := StartNode(t, tools, t.TempDir(), "--http", "127.0.0.1:0")
	base := httpBase(t, node)
	env := []string{"NATS_URL=" + node.URL}

	r := runCLI(t, env, "conv", "send", "ghost/c1", "hello")
	if r.code != 3 || !strings.Contains(r.stderr, "no project ghost is open") {
		t.Fatalf("conv send ghost/c1 with no project ghost: exit %d %s, want 3 naming the project", r.code, r.stderr)
	}
	if rep := forge(t, node, "ghost/c1"); rep["ok"] != false {
		t.Fatalf("a forged answer to ghost/c1: %v, want refused", rep)
	}
	runCLI(t, env, "project", "open", t.TempDir(), "--id", "ghost").must(t, "project open ghost")
	if out := runCLI(t, env, "conv", "ls", "-o", "json").must(t, "conv ls"); strings.Contains(out, "ghost/c1") {
		t.Fatalf("conv ls lists ghost/c1:\n%s", out)
	}
	if r := runCLI(t, env, "conv", "show", "ghost/c1"); strings.Contains(r.stdout, "FORGED") {
		t.Fatalf("conv show ghost/c1 shows a forged answer:\n%s", r.stdout)
	}
	if body := a2aGetRaw(t, base, "ghost", "c1"); strings.Contains(body, "FORGED") || !strings.Contains(body, `"error"`) {
		t.Fatalf("A2A GetTask c1 of ghost: %s, want an error", body)
	}

	// Started outside ghost2 by an operator while ghost2 was closed.
	runCLI(t, env, "agent", "start", "conversation", "--id", "ghost2/c1").must(t, "agent start")
	runCLI(t, env, "conv", "send", "ghost2/c1", "hello").must(t, "conv send")
	if rep := forge(t, node, "ghost2/c1"); rep["ok"] != true {
		t.Fatalf("an answer written from outside to ghost2/c1 (driven from outside, no project): %v", rep)
	}
	runCLI(t, env, "project", "open", t.TempDir(), "--id", "ghost2").must(t, "project open ghost2")
	if rep := forge(t, node, "ghost2/c1"); rep["ok"] != false {
		t.Fatalf("a forged answer to ghost2/c1 once ghost2 is open: %v, want refused", rep)
	}
	if r := runCLI(t, env, "conv", "send", "ghost2/c1", "again"); r.code == 0 || !strings.Contains(r.stderr, "stopped") {
		t.Fatalf("conv send ghost2/c1 once ghost2 is open: exit %d %s, want refused: stopped", r.code, r.stderr)
	}
	if body := a2aGetRaw(t, base, "ghost2", "c1"); strings.Contains(body, "FORGED") || !strings.Contains(body, `"error"`) {
		t.Fatalf("A2A GetTask c1 of ghost2 (no token: an admin): %s, want an error", body)
	}
	if out := runCLI(t, env, "log", "show", "project/ghost2", "--type", "project.conv.stopped", "-o", "json").must(t, "log show"); !strings.Contains(out, "disowned") {
		t.Fatalf("ghost2's stream does not say why ghost2/c1 stopped:\n%s", out)
	}
}

// slowBodies sends n requests of token to path on the listener at base,
// each with its headers and the first bytes of a body that never ends,
// and returns the channel their answers' statuses arrive on (0: the
// connection ended without one). The connections close when the test
// ends.
func slowBodies(t *testing.T, base, path, token string, n int) <-chan int {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	codes := make(chan int, n)
	for range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"", path, token)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	return codes
}

// TestAccessOneTokenCannotStarveAnother: 300 slow bodies from p1's token
// (more than the door's 256 slots, which they used to fill for 30 s)
// take p1-bot's share of 64 and no more — the rest are refused 503 at
// once — so p2's token is served meanwhile; the 64 end 408 when the body
// deadline passes. A request with a wrong token whose body never comes is
// answered 401 at once (net/http waited for that body before answering).
func TestAccessOneTokenCannotStarveAnother(t *testing.T) {
	t.Setenv("JIDO_E2E_ACCESS_P1", "e2e-access-p1-token-04")
	t.Setenv("JIDO_E2E_ACCESS_P2", "e2e-access-p2-token-05")
	cfg := writeFile(t, "jido.yaml", `http:
  listen: 127.0.0.1:0
  tokens:
    - {name: p1-bot, env: JIDO_E2E_ACCESS_P1, project: p1}
    - {name: p2-bot, env: JIDO_E2E_ACCESS_P2, project: p2}
`)
	node := StartNode(t, tools, t.TempDir(), "--config", cfg, "--open", t.TempDir()+"=p1", "--open", t.TempDir()+"=p2")
	base := httpBase(t, node)

	const sent, slots, perCaller = 300, 256, 64
	codes := slowBodies(t, base, "/a2a/p1", "e2e-access-p1-token-04", sent)
	count := map[int]int{}
	next := func() {
		t.Helper()
		select {
		case code := <-codes:
			count[code]++
		case <-time.After(time.Minute): // bounds a failure only
			t.Fatalf("no answer to p1-bot's slow bodies for a minute (so far %v): a refused request's answer waits for its body?", count)
		}
	}
	p2 := func() {
		t.Helper()
		card := httpDo(t, "GET", base+"/a2a/p2/.well-known/agent-card.json", "", map[string]string{"Authorization": "Bearer e2e-access-p2-token-05"})
		if card.code != http.StatusOK {
			t.Fatalf("p2-bot while p1-bot's slow bodies are in flight (their answers so far: %v): %d %s, want served", count, card.code, card.body)
		}
	}
	// p2-bot is served all along, until sent-slots refusals say that
	// every slow body has reached the door, and after.
	testkit.EventuallyNil(t, fmt.Sprintf("%d of p1-bot's slow bodies refused at once", sent-slots), func() error {
		p2()
		for drained := false; !drained; {
			select {
			case code := <-codes:
				count[code]++
			default:
				drained = true
			}
		}
		if count[http.StatusServiceUnavailable] < sent-slots {
			return fmt.Errorf("answered so far: %v", count)
		}
		return nil
	})
	p2()
	if len(count) != 1 {
		t.Fatalf("answers to the slow bodies so far: %v, want 503s only", count)
	}
	// The rest: refused past p1-bot's share, and the share's own bodies
	// timed out.
	for range sent - count[http.StatusServiceUnavailable] {
		next()
	}
	if count[http.StatusServiceUnavailable] != sent-perCaller || count[http.StatusRequestTimeout] != perCaller {
		t.Fatalf("answers to %d slow bodies: %v, want %d 503 and %d 408", sent, count, sent-perCaller, perCaller)
	}

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /a2a/p1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\nContent-Length: 100\r\n\r\n")
	// Bounds a failure only: the answer comes at once or never.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a wrong token with a body that never comes: no answer (%v), want 401 at once", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token with a body that never comes: %d, want 401", resp.StatusCode)
	}
}
