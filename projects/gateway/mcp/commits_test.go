package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
)

// TestToolCallCommits: over MCP, a tool that changes nothing costs one
// commit — its start, its outcome and the request's record, in that
// order, decided and committed together after it ran — and a tool that
// writes two: its start before it runs, then its outcome with the
// request's record. (The runtime stamps every cmd record of one append
// with the same time; entries committed one after another get their own.)
func TestToolCallCommits(t *testing.T) {
	e := start(t)
	cs := e.connect(t, "/mcp/p1", nil)
	ctx := context.Background()
	for _, c := range []struct {
		tool string
		args map[string]any
		want [][]string // the entries of the call, by commit
	}{
		{"read_file", map[string]any{"path": "main.go"},
			[][]string{{projects.TypeToolStarted, projects.TypeToolCompleted, projects.TypeGatewayRequest}}},
		{"list_dir", map[string]any{"path": "."},
			[][]string{{projects.TypeToolStarted, projects.TypeToolCompleted, projects.TypeGatewayRequest}}},
		{"read_file", map[string]any{"path": "../x"},
			[][]string{{projects.TypeToolStarted, projects.TypeToolFailed, projects.TypeGatewayRequest}}},
		{"edit_file", map[string]any{"path": "main.go", "old_string": "package main", "new_string": "package main // edited"},
			[][]string{{projects.TypeToolStarted}, {projects.TypeToolCompleted, projects.TypeGatewayRequest}}},
	} {
		before := lastSeq(t, e)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		if got := commitsSince(t, e, before); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v (isError %v): entries by commit %v, want %v", c.tool, c.args, res.IsError, got, c.want)
		}
	}
}

func lastSeq(t *testing.T, e *env) uint64 {
	t.Helper()
	var last uint64
	for en, err := range e.n.Log().ReadStream(projects.Stream("p1"), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		last = en.Seq
	}
	return last
}

// commitsSince groups the project entries after seq by the time of their
// cmd records: one group per append.
func commitsSince(t *testing.T, e *env, seq uint64) [][]string {
	t.Helper()
	typeOf := map[string]string{}
	var groups [][]string
	var at time.Time
	for en, err := range e.n.Log().ReadStream(projects.Stream("p1"), eventlog.ReadOptions{From: seq + 1}) {
		if err != nil {
			t.Fatal(err)
		}
		if en.Event.Type() != "jido.agent.cmd" {
			typeOf[en.Event.ID()] = en.Event.Type()
			continue
		}
		var rec struct{ Signal string }
		if err := json.Unmarshal(en.Event.Data(), &rec); err != nil {
			t.Fatal(err)
		}
		if len(groups) == 0 || !en.Event.Time().Equal(at) {
			groups = append(groups, nil)
			at = en.Event.Time()
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], typeOf[rec.Signal])
	}
	return groups
}
