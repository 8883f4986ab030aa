package projects_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// TestRootGoneWhileOpen: a project whose root folder is removed or moved
// while open answers tool calls (recorded as failed), reloads and gets
// with an error saying the root is gone, its get shows the error status,
// and it still closes.
func TestRootGoneWhileOpen(t *testing.T) {
	for _, how := range []string{"removed", "moved"} {
		t.Run(how, func(t *testing.T) {
			n := startNode(t, t.TempDir(), true)
			defer closeNode(t, n)
			e := n.Projects()
			ctx := context.Background()
			dir := projectDir(t)
			if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
				t.Fatal(err)
			}
			if how == "removed" {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Rename(dir, dir+".moved"); err != nil {
				t.Fatal(err)
			}
			_, err := e.CallTool(ctx, "p1", tools.ToolCall{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)})
			if err == nil || !strings.Contains(err.Error(), "gone") {
				t.Fatalf("a tool call with the root %s: %v, want an error saying the root is gone", how, err)
			}
			types, data := entries(t, n, "p1")
			if len(types) == 0 || types[len(types)-1] != projects.TypeToolFailed || !strings.Contains(string(data[len(data)-1]), "c1") {
				t.Fatalf("stream after the call: %v, want it to end with the call failed", types)
			}
			_, err = e.Reload(ctx, "p1")
			if bus.ErrorType(err) != bus.ReasonUnavailable || !strings.Contains(err.Error(), "gone") {
				t.Fatalf("reload: %v, want unavailable saying the root is gone", err)
			}
			info, err := e.Get("p1")
			if err != nil || info.Status != projects.StatusError || info.Error == nil || !strings.Contains(info.Error.Message, "gone") {
				t.Fatalf("get: %+v %v, want status error saying the root is gone", info, err)
			}
			if l := e.List(); len(l) != 1 || l[0].Status != projects.StatusError {
				t.Fatalf("ls: %+v", l)
			}
			if slices.Contains(types, projects.TypeAssetsReloaded) {
				t.Fatalf("the root's loss was recorded as a reload: %v", types)
			}
			if err := e.CloseProject(ctx, "p1", "gone"); err != nil {
				t.Fatalf("close: %v", err)
			}
			if _, err := e.Get("p1"); bus.ErrorType(err) != bus.ReasonNotFound {
				t.Fatalf("get after close: %v", err)
			}
		})
	}
}
