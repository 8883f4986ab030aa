package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
)

// TestToolCallAuditKilledMidCall: `jido-bus mcp --project` (the stdio
// server an IDE starts) is killed with SIGKILL between a tool's effect and
// its answer — a run_command that wrote a file and is still running —
// and its log still holds the call's start: a tool that may change
// something is recorded before it runs. A read answered before the kill
// is in the log with its outcome and the request's record: a tool that
// changes nothing is recorded, start and outcome together, before its
// answer is sent.
func TestToolCallAuditKilledMidCall(t *testing.T) {
	proj, data := t.TempDir(), t.TempDir()
	// slowArg is 300 seconds, spelled so that no other process has it.
	slowArg := fmt.Sprintf("300.%05d", os.Getpid()%100000)
	writeProjectTree(t, proj, map[string]string{
		"a.txt":             "hello\n",
		".jido/policy.yaml": "commands:\n  programs: [sh]\n",
	})
	defer killAll("sleep\x00" + slowArg + "\x00")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(tools.JidoBus, "mcp", "--project", proj, "--id", "p", "--data-dir", data)
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("read_file: %v %+v\n%s", err, res, stderr.String())
	}

	answered := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{
			"argv": []string{"sh", "-c", "echo done > effect.txt; exec sleep " + slowArg}}})
		answered <- err
	}()
	testkit.Eventually(t, "run_command's effect (effect.txt)", func() bool {
		_, err := os.Stat(filepath.Join(proj, "effect.txt"))
		return err == nil
	})
	select {
	case err := <-answered:
		t.Fatalf("run_command was answered (%v) while it still runs", err)
	default:
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cs.Wait() // the transport reaps the process once its pipes close

	l, err := eventlog.Open(node.LogDir(data), eventlog.Options{})
	if err != nil {
		t.Fatalf("open the killed server's log: %v", err)
	}
	defer l.Close()
	var got []string
	for e, err := range l.ReadStream("project/p", eventlog.ReadOptions{Types: "project.**"}) {
		if err != nil {
			t.Fatal(err)
		}
		if typ := e.Event.Type(); !strings.HasPrefix(typ, "project.tool.") && typ != "project.gateway.request" {
			continue
		}
		var d struct{ Tool, Target, Result string }
		if err := json.Unmarshal(e.Event.Data(), &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimPrefix(e.Event.Type(), "project.")+" "+d.Tool+d.Target+" "+d.Result)
	}
	want := []string{
		"tool.started read_file ", "tool.completed read_file ok", "gateway.request read_file ok",
		"tool.started run_command ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the killed server's log holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
