package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

var apiNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func nopTool(name string) Tool {
	return Tool{Name: name, Description: "test", InputSchema: []byte(`{"type":"object"}`),
		Func: func(context.Context, *Call) (any, error) { return name, nil }}
}

func catalogOf(t *testing.T, names ...string) (*Catalog, error) {
	t.Helper()
	ts := make([]Tool, len(names))
	for i, n := range names {
		ts[i] = nopTool(n)
	}
	return NewCatalog(ts...)
}

func hashed(prefix, name string) string {
	sum := sha256.Sum256([]byte(name))
	return prefix + "_" + hex.EncodeToString(sum[:])[:apiHashLen]
}

func TestAPINames(t *testing.T) {
	long := strings.Repeat("x", 60) + ".tool." + strings.Repeat("y", 50) // 116 bytes
	long2 := strings.Repeat("x", 60) + ".tool." + strings.Repeat("z", 50)
	exactly64 := strings.Repeat("a", 63) + "."
	names := []string{
		"read_file", "command.git:commit", "skill_graph.search",
		"command.a.b", "command_a.b", // both translate to command_a_b
		"workflow.x", "workflow_x", // workflow_x is its own: workflow.x yields
		long, long2, exactly64, strings.Repeat("b", 64),
	}
	want := map[string]string{
		"read_file":             "read_file",
		"command.git:commit":    "command_git-commit",
		"skill_graph.search":    "skill_graph_search",
		"command.a.b":           hashed("command_a_b", "command.a.b"),
		"command_a.b":           hashed("command_a_b", "command_a.b"),
		"workflow_x":            "workflow_x",
		"workflow.x":            hashed("workflow_x", "workflow.x"),
		long:                    hashed(translate(long)[:64-1-apiHashLen], long),
		long2:                   hashed(translate(long2)[:64-1-apiHashLen], long2),
		exactly64:               strings.Repeat("a", 63) + "_",
		strings.Repeat("b", 64): strings.Repeat("b", 64),
	}
	// The mapping depends on the set, not the order.
	for _, order := range [][]string{names, reversed(names)} {
		cat, err := catalogOf(t, order...)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, n := range names {
			a, ok := cat.APIName(n)
			if !ok || a != want[n] {
				t.Errorf("APIName(%s) = %q %v, want %q", n, a, ok, want[n])
			}
			if !apiNameRE.MatchString(a) {
				t.Errorf("APIName(%s) = %q: not accepted by the LLM APIs", n, a)
			}
			if other, dup := seen[a]; dup {
				t.Errorf("%s and %s share the API name %s", n, other, a)
			}
			seen[a] = n
			if back, ok := cat.Lookup(a); !ok || back != n {
				t.Errorf("Lookup(%s) = %q %v, want %s", a, back, ok, n)
			}
		}
		for _, unknown := range []string{"command.git:commit", "command_a_b", "nope"} {
			if n, ok := cat.Lookup(unknown); ok {
				t.Errorf("Lookup(%s) = %s; it is no tool's API name", unknown, n)
			}
		}
		for _, s := range cat.List(policy.Default()) {
			if s.APIName != want[s.Name] {
				t.Errorf("List: %s has api_name %q, want %q", s.Name, s.APIName, want[s.Name])
			}
		}
	}
	if _, ok := (&Catalog{}).APIName("x"); ok {
		t.Error("APIName of an empty catalog")
	}
}

func TestAPINameCollisionRefused(t *testing.T) {
	// A tool literally named what a.b's disambiguated name would be.
	_, err := catalogOf(t, "a.b", "a_b", hashed("a_b", "a.b"))
	if err == nil || !strings.Contains(err.Error(), "a.b") || !strings.Contains(err.Error(), "rename one") {
		t.Fatalf("NewCatalog with a colliding API name: %v", err)
	}
}

func reversed(s []string) []string {
	r := make([]string, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}
