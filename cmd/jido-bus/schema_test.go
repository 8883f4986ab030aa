package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestSchemaCommand(t *testing.T) {
	defer goleak.VerifyNone(t)

	out, err := runRoot(t, "schema", "ls")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KIND", "signal", "jido.agent.child.exit", "directive", "directive.spawn_agent"} {
		if !strings.Contains(out, want) {
			t.Errorf("schema ls does not list %q:\n%s", want, out)
		}
	}

	out, err = runRoot(t, "schema", "ls", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var shape struct{ Schemas []struct{ Name, Kind string } }
	err = json.Unmarshal([]byte(out), &shape)
	entries := shape.Schemas
	if err != nil || len(entries) < 16 {
		t.Fatalf("schema ls --json: %v, %d entries:\n%s", err, len(entries), out)
	}

	out, err = runRoot(t, "schema", "show", "jido.agent.error")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc["title"] != "Agent error" {
		t.Errorf("schema show printed %v (%v):\n%s", doc["title"], err, out)
	}

	if _, err := runRoot(t, "schema", "show", "no.such"); err == nil || !strings.Contains(err.Error(), "schema ls") {
		t.Errorf("schema show of an unknown name: %v", err)
	}
	if _, err := runRoot(t, "schema", "show"); err == nil {
		t.Error("schema show without a name succeeded")
	}
	out, _ = runRoot(t, "schema", "--help")
	if !strings.Contains(out, "ls") || !strings.Contains(out, "show") {
		t.Errorf("schema --help:\n%s", out)
	}
}
