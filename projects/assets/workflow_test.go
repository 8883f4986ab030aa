package assets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// knownTools is the catalog the tests load against.
func knownTools(name string) bool {
	switch name {
	case "read_file", "write_file", "grep", "command_git-commit":
		return true
	}
	return false
}

const goodWorkflow = `---
name: review
description: Read a file and grep it.
inputs:
  path:
    type: string
    minLength: 1
  depth:
    type: integer
    default: 2
---
# Review

Some prose.

` + "```yaml" + `
steps:
  - id: read
    tool: read_file
    args:
      path: "{{inputs.path}}"
  - id: find
    tool: grep
    args:
      pattern: "TODO in {{ inputs.path }} at {{inputs.depth}}"
      body: "{{steps.read.output.content}}"
      whole: "{{steps.read.output}}"
      literal: \{{not a ref}}
      nested: ["{{inputs.path}}", 3]
  - id: commit
    command: git:commit
    args:
      message: "{{steps.find.output}}"
` + "```\n"

func parseOne(t *testing.T, src string) (*Workflow, []Diagnostic) {
	t.Helper()
	return ParseWorkflow("workflows/w.md", []byte(src), knownTools)
}

func TestWorkflowParsesAndRunsInOrder(t *testing.T) {
	w, diags := parseOne(t, goodWorkflow)
	if len(diags) > 0 || w == nil {
		t.Fatalf("diagnostics: %v", diags)
	}
	if w.Name != "review" || len(w.Steps) != 3 || w.Steps[2].Tool != "command_git-commit" {
		t.Fatalf("parsed %+v", w)
	}
	if w.Steps[0].Line != 18 {
		t.Fatalf("step read at line %d, want 18", w.Steps[0].Line)
	}
	var calls []string
	var gotArgs []map[string]any
	call := func(ctx context.Context, tool string, args map[string]any) (any, error) {
		calls = append(calls, tool)
		gotArgs = append(gotArgs, args)
		switch tool {
		case "read_file":
			return map[string]any{"content": "hello"}, nil
		case "grep":
			return "found", nil
		}
		return "ok", nil
	}
	outs, err := w.Run(context.Background(), map[string]any{"path": "a.go"}, call)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(calls) != "[read_file grep command_git-commit]" {
		t.Fatalf("calls %v", calls)
	}
	if len(outs) != 3 || outs[1].ID != "find" || outs[1].Output != "found" {
		t.Fatalf("outputs %+v", outs)
	}
	g := gotArgs[1]
	if g["pattern"] != "TODO in a.go at 2" {
		t.Errorf("pattern = %q (the default depth 2 should be filled in)", g["pattern"])
	}
	if g["body"] != "hello" {
		t.Errorf("body = %v", g["body"])
	}
	if m, ok := g["whole"].(map[string]any); !ok || m["content"] != "hello" {
		t.Errorf("a whole-string reference keeps the value's type: %#v", g["whole"])
	}
	if g["literal"] != "{{not a ref}}" {
		t.Errorf("literal = %q", g["literal"])
	}
	if n, ok := g["nested"].([]any); !ok || n[0] != "a.go" || n[1] != float64(3) {
		t.Errorf("nested = %#v", g["nested"])
	}
	if gotArgs[2]["message"] != "found" {
		t.Errorf("message = %v", gotArgs[2]["message"])
	}
}

func workflowWith(front, steps string) string {
	return "---\n" + front + "---\n\n```yaml\n" + steps + "```\n"
}

const okFront = "name: w\ndescription: d\ninputs:\n  path: {type: string}\n"

func TestWorkflowBadInputIsADiagnosticWithALine(t *testing.T) {
	cases := []struct {
		name, src, want string
		line            int
	}{
		{"unknown tool", workflowWith(okFront, "steps:\n  - id: a\n    tool: rm_rf\n"), `unknown tool "rm_rf"`, 10},
		{"unknown command", workflowWith(okFront, "steps:\n  - id: a\n    command: nope\n"), `unknown command "nope"`, 10},
		{"later step", workflowWith(okFront, "steps:\n  - id: a\n    tool: grep\n    args: {x: \"{{steps.b.output}}\"}\n  - id: b\n    tool: grep\n"), "runs later", 10},
		{"own step", workflowWith(okFront, "steps:\n  - id: a\n    tool: grep\n    args: {x: \"{{steps.a.output}}\"}\n"), "its own output", 10},
		{"unknown step", workflowWith(okFront, "steps:\n  - id: a\n    tool: grep\n    args: {x: \"{{steps.zz.output}}\"}\n"), `no step "zz"`, 10},
		{"unknown input", workflowWith(okFront, "steps:\n  - id: a\n    tool: grep\n    args: {x: \"{{inputs.nope}}\"}\n"), `no input "nope"`, 10},
		{"bad reference", workflowWith(okFront, "steps:\n  - id: a\n    tool: grep\n    args: {x: \"{{ env.HOME }}\"}\n"), "not a reference", 10},
		{"unterminated", workflowWith(okFront, "steps:\n  - id: a\n    tool: grep\n    args: {x: \"{{inputs.path\"}\n"), "no closing }}", 10},
		{"bad front matter yaml", workflowWith("name: [w\n", "steps: []\n"), "front matter", 2},
		{"unknown front matter key", workflowWith(okFront+"inptus: {}\n", "steps:\n  - {id: a, tool: grep}\n"), "inptus", 6},
		{"no front matter", "# just prose\n\n```yaml\nsteps: []\n```\n", "front matter", 1},
		{"unclosed front matter", "---\nname: w\n", "front matter", 1},
		{"missing name", workflowWith("description: d\n", "steps:\n  - {id: a, tool: grep}\n"), "name", 2},
		{"bad name", workflowWith("name: Bad Name\ndescription: d\n", "steps:\n  - {id: a, tool: grep}\n"), "name", 2},
		{"missing description", workflowWith("name: w\n", "steps:\n  - {id: a, tool: grep}\n"), "description", 2},
		{"bad schema", workflowWith("name: w\ndescription: d\ninputs:\n  n: {type: wibble}\n", "steps:\n  - {id: a, tool: grep}\n"), `input "n"`, 5},
		{"remote ref refused", workflowWith("name: w\ndescription: d\ninputs:\n  n: {$ref: 'file:///dev/zero'}\n", "steps:\n  - {id: a, tool: grep}\n"), `input "n"`, 5},
		{"missing steps block", "---\n" + okFront + "---\n\nNo steps here.\n", "no ```yaml block", 0},
		{"block without steps key", workflowWith(okFront, "stpes:\n  - {id: a, tool: grep}\n"), "no ```yaml block", 0},
		{"empty steps", workflowWith(okFront, "steps: []\n"), "no steps", 9},
		{"steps not a list", workflowWith(okFront, "steps: {a: 1}\n"), "list", 9},
		{"duplicate step ids", workflowWith(okFront, "steps:\n  - {id: a, tool: grep}\n  - {id: a, tool: grep}\n"), `duplicate step id "a" (first at line 10)`, 11},
		{"tool and command", workflowWith(okFront, "steps:\n  - {id: a, tool: grep, command: git:commit}\n"), "exactly one of tool or command", 10},
		{"neither tool nor command", workflowWith(okFront, "steps:\n  - {id: a}\n"), "exactly one of tool or command", 10},
		{"missing id", workflowWith(okFront, "steps:\n  - {tool: grep}\n"), "id", 10},
		{"bad id", workflowWith(okFront, "steps:\n  - {id: a.b, tool: grep}\n"), "id", 10},
		{"unknown step key", workflowWith(okFront, "steps:\n  - {id: a, tool: grep, arg: {}}\n"), "arg", 10},
		{"nested workflow", workflowWith(okFront, "steps:\n  - {id: a, tool: workflow_w}\n"), "cannot call another workflow", 10},
		{"broken step yaml", workflowWith(okFront, "steps:\n  - id: a\n   tool: [\n"), "steps block", 11},
		{"not utf-8", workflowWith(okFront, "steps:\n  - {id: a, tool: grep, args: {x: \"\xff\"}}\n"), "UTF-8", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, diags := parseOne(t, c.src)
			if w != nil {
				t.Fatalf("loaded %+v; want refused", w)
			}
			if len(diags) == 0 {
				t.Fatal("no diagnostic")
			}
			d := diags[0]
			if d.File != "workflows/w.md" || !strings.Contains(d.Reason, c.want) {
				t.Fatalf("diagnostic %q; want one containing %q", d, c.want)
			}
			if c.line > 0 && d.Line != c.line {
				t.Fatalf("diagnostic %q at line %d; want %d", d, d.Line, c.line)
			}
		})
	}
}

func TestLoadWorkflowsKeepsTheGoodOnesAndRefusesDuplicatesNamingBoth(t *testing.T) {
	fsys := fstest.MapFS{
		"workflows/review.md":  {Data: []byte(goodWorkflow)},
		"workflows/broken.md":  {Data: []byte("---\nname: [\n---\n")},
		"workflows/one.md":     {Data: []byte(workflowWith("name: dup\ndescription: d\n", "steps:\n  - {id: a, tool: grep}\n"))},
		"workflows/two.md":     {Data: []byte(workflowWith("name: dup\ndescription: d\n", "steps:\n  - {id: a, tool: grep}\n"))},
		"workflows/notes.txt":  {Data: []byte("ignored")},
		"workflows/sub/x.md":   {Data: []byte("ignored: workflows are not nested")},
		"workflows/huge.md":    {Data: make([]byte, DefaultMaxFileSize+1)},
		"workflows/cyclic.md":  {Data: []byte(workflowWith("name: cyclic\ndescription: d\n", "steps:\n  - {id: a, tool: grep}\n"))},
		"skill_graph/index.md": {Data: []byte("# not a workflow")},
	}
	ws, diags := LoadWorkflows(fsys, knownTools)
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
		if w.Source.File == "" || len(w.Source.Hash) != 64 || w.Source.LoadedAt.IsZero() {
			t.Errorf("workflow %s has source %+v", w.Name, w.Source)
		}
	}
	if fmt.Sprint(names) != "[cyclic review]" {
		t.Fatalf("loaded %v; want [cyclic review]", names)
	}
	all := fmt.Sprint(diags)
	for _, want := range []string{"workflows/broken.md:2:", "workflows/one.md: name \"dup\" is also claimed by workflows/two.md", "workflows/two.md: name \"dup\" is also claimed by workflows/one.md", "workflows/huge.md: is 1048577 bytes, over the"} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics %s\nlack %q", all, want)
		}
	}
	if len(diags) != 4 {
		t.Errorf("want 4 diagnostics, got %d: %s", len(diags), all)
	}
}

func TestWorkflowRunRefusesInputsThatFailTheirSchema(t *testing.T) {
	w, diags := parseOne(t, goodWorkflow)
	if w == nil {
		t.Fatal(diags)
	}
	cases := []struct {
		name   string
		inputs map[string]any
		input  string
	}{
		{"wrong type", map[string]any{"path": 3}, "path"},
		{"too short", map[string]any{"path": ""}, "path"},
		{"missing required", map[string]any{}, "path"},
		{"unknown input", map[string]any{"path": "a", "paht": "b"}, "paht"},
		{"default of wrong type given", map[string]any{"path": "a", "depth": "deep"}, "depth"},
		{"not JSON", map[string]any{"path": make(chan int)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := false
			_, err := w.Run(context.Background(), c.inputs, func(context.Context, string, map[string]any) (any, error) {
				called = true
				return nil, nil
			})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v; want *InputError", err)
			}
			if ie.Input != c.input || ie.Workflow != "review" {
				t.Fatalf("InputError %+v; want input %q", ie, c.input)
			}
			if called {
				t.Fatal("a step ran although the inputs were refused")
			}
		})
	}
}

func TestWorkflowRunStopsAtTheFirstFailingStep(t *testing.T) {
	w, _ := parseOne(t, goodWorkflow)
	boom := errors.New("boom")
	var calls []string
	outs, err := w.Run(context.Background(), map[string]any{"path": "a"}, func(_ context.Context, tool string, _ map[string]any) (any, error) {
		calls = append(calls, tool)
		if tool == "grep" {
			return nil, boom
		}
		return map[string]any{"content": "x"}, nil
	})
	var se *StepError
	if !errors.As(err, &se) || se.Step != "find" || se.Index != 1 || !errors.Is(err, boom) {
		t.Fatalf("err = %v; want a StepError for step find wrapping boom", err)
	}
	if !strings.Contains(err.Error(), `step "find"`) {
		t.Fatalf("error %q does not name the step", err)
	}
	if len(calls) != 2 || len(outs) != 1 || outs[0].ID != "read" {
		t.Fatalf("calls %v outputs %+v; want the run to stop after find", calls, outs)
	}
}

func TestWorkflowRunFailsAStepWhoseOutputLacksAReferencedMember(t *testing.T) {
	w, _ := parseOne(t, goodWorkflow)
	_, err := w.Run(context.Background(), map[string]any{"path": "a"}, func(_ context.Context, tool string, _ map[string]any) (any, error) {
		return "plain string, no content member", nil
	})
	var se *StepError
	if !errors.As(err, &se) || se.Step != "find" || !strings.Contains(err.Error(), "steps.read.output.content") {
		t.Fatalf("err = %v; want step find to fail naming the reference", err)
	}
}

func TestWorkflowRunStopsWhenTheContextIsDone(t *testing.T) {
	w, _ := parseOne(t, goodWorkflow)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := w.Run(ctx, map[string]any{"path": "a"}, func(context.Context, string, map[string]any) (any, error) {
		n++
		cancel()
		return map[string]any{"content": "x"}, nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("err = %v after %d calls; want context.Canceled after 1", err, n)
	}
}

func TestWorkflowInputSchemaListsInputsAndRequired(t *testing.T) {
	w, _ := parseOne(t, goodWorkflow)
	got := string(w.InputSchema())
	want := `{"type":"object","properties":{"depth":{"default":2,"type":"integer"},"path":{"minLength":1,"type":"string"}},"required":["path"],"additionalProperties":false}`
	if got != want {
		t.Fatalf("InputSchema\n got %s\nwant %s", got, want)
	}
}
