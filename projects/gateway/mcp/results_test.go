package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validates checks value against schema as a client does (the TypeScript
// SDK checks every structured content against the tool's output schema).
func validates(t *testing.T, schema, value any) error {
	t.Helper()
	raw := func(v any) any {
		b, _ := json.Marshal(v)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("urn:out", raw(schema)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:out")
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(raw(value))
}

// TestLargeResultHasStructuredContent (issue 21, item 12): a result over
// the size limit still has structured content — the artifact's stand-in,
// which the listed output schema admits — beside its text and resource
// link, and the artifact is the same media type in the link and in
// resources/read (no structured content made the TypeScript SDK throw;
// the link said application/json and resources/read text/plain).
func TestLargeResultHasStructuredContent(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	cs := e.connect(t, "/mcp/p1", nil)
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema any
	for _, tl := range lt.Tools {
		if tl.Name == "read_file" {
			schema = tl.OutputSchema
		}
	}
	small, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil || small.IsError {
		t.Fatalf("read main.go: %+v %v", small, err)
	}
	if err := validates(t, schema, small.StructuredContent); err != nil {
		t.Errorf("a small result fails the listed output schema: %v", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "big.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("read big.txt: %+v %v", res, err)
	}
	if res.StructuredContent == nil {
		t.Fatal("a large result has no structured content while read_file declares an output schema")
	}
	if err := validates(t, schema, res.StructuredContent); err != nil {
		t.Errorf("the large result's structured content fails the listed output schema: %v", err)
	}
	var link *sdk.ResourceLink
	var text string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.ResourceLink:
			link = c
		case *sdk.TextContent:
			text = c.Text
		}
	}
	if link == nil || !strings.Contains(text, link.URI) || !strings.Contains(text, "a line of a large file") {
		t.Fatalf("content %+v: want a text naming the link, with a preview, and the link", res.Content)
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: link.URI})
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.Contents[0].MIMEType; got != link.MIMEType || got == "" {
		t.Errorf("the link says %q, resources/read %q", link.MIMEType, got)
	}
	if !json.Valid([]byte(rr.Contents[0].Text)) {
		t.Errorf("the artifact (%s) is not the JSON output", link.MIMEType)
	}
}

// TestToolsReadLikeOtherServers (item 17): asset tools are named
// <kind>_<name>; read_file's text is the file's text, its output beside
// it as structured content; a command's named arguments are in its
// schema; a workflow that only reads is offered, read-only, without
// commands.programs.
func TestToolsReadLikeOtherServers(t *testing.T) {
	e := start(t)
	writeFiles(t, e.dir, map[string]string{".jido/workflows/peek.md": "---\nname: peek\ndescription: Read a file\ninputs:\n  path: {type: string}\n---\n```yaml\nsteps:\n  - {id: r, tool: read_file, args: {path: \"{{inputs.path}}\"}}\n```\n"})
	if _, err := e.n.Projects().Reload(context.Background(), "p1"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := e.connect(t, "/mcp/p1", nil)
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdk.Tool{}
	for _, tl := range lt.Tools {
		byName[tl.Name] = tl
		if strings.ContainsAny(tl.Name, ".:") {
			t.Errorf("tool %s: want <kind>_<name> like the others", tl.Name)
		}
	}
	hello, ok := byName["command_hello"]
	if !ok {
		t.Fatalf("no command_hello in %v", names(lt.Tools))
	}
	if s, _ := json.Marshal(hello.InputSchema); !strings.Contains(string(s), `"place"`) {
		t.Errorf("command_hello's schema %s does not name {{place}}", s)
	}
	peek, ok := byName["workflow_peek"]
	if !ok {
		t.Fatalf("the read-only workflow is not offered: %v", names(lt.Tools))
	}
	if peek.Annotations == nil || !peek.Annotations.ReadOnlyHint {
		t.Errorf("workflow_peek annotations %+v: want read-only", peek.Annotations)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil || res.IsError {
		t.Fatalf("read main.go: %+v %v", res, err)
	}
	if txt := res.Content[0].(*sdk.TextContent).Text; txt != "package main\n" {
		t.Errorf("read_file's text %q, want the file's text", txt)
	}
	if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"total_lines":1`) {
		t.Errorf("read_file's structured content %s", sc)
	}
}

// TestCompletions (item 17): completion/complete offers a prompt
// argument's paths and a resource template's names.
func TestCompletions(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	cs := e.connect(t, "/mcp/p1", nil)
	if cs.InitializeResult().Capabilities.Completions == nil {
		t.Fatal("the server declares no completions capability")
	}
	comp := func(ref *sdk.CompleteReference, arg, value string) []string {
		t.Helper()
		r, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("complete %s %s %q: %v", ref.Name+ref.URI, arg, value, err)
		}
		return r.Completion.Values
	}
	prompt := &sdk.CompleteReference{Type: "ref/prompt", Name: "hello"}
	if got := comp(prompt, "arguments", "you ma"); !slices.Equal(got, []string{"you main.go"}) {
		t.Errorf("hello arguments \"you ma\": %v", got)
	}
	if got := comp(prompt, "place", "b"); !slices.Equal(got, []string{"big.txt"}) {
		t.Errorf("hello place \"b\": %v", got)
	}
	if got := comp(prompt, "nope", ""); len(got) != 0 {
		t.Errorf("an argument hello does not take: %v", got)
	}
	if got := comp(&sdk.CompleteReference{Type: "ref/resource", URI: "jido://p1/skills/{name}"}, "name", "re"); !slices.Equal(got, []string{"review"}) {
		t.Errorf("skills {name} \"re\": %v", got)
	}
	if got := comp(&sdk.CompleteReference{Type: "ref/resource", URI: "jido://p1/notes/{+id}"}, "id", "top"); !slices.Equal(got, []string{"topics/go"}) {
		t.Errorf("notes {+id} \"top\": %v", got)
	}
}

// TestOldToolNamesAreRefusedNamingTheNew: a call by an asset tool's name
// before the rename is refused naming the one to call, on /mcp/{project}
// and on /mcp (qualified by the project), and recorded.
func TestOldToolNamesAreRefusedNamingTheNew(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	for path, c := range map[string]struct{ old, now string }{
		"/mcp/p1": {"command.hello", "call command_hello"},
		"/mcp":    {"p1.skill.review", "call p1.skill_review"},
	} {
		cs := e.connect(t, path, nil)
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.old, Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), c.now) {
			t.Errorf("%s %s: %v, want it refused saying %q", path, c.old, err, c.now)
		}
	}
	findRecord(t, e.n, "p1", "tools/call", "command.hello")
}
