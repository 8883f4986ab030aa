package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkoutRoot is the repository's root, found when the package loads:
// the suite may move the process into a directory of its own before the
// tests run.
var checkoutRoot, checkoutRootErr = moduleRoot()

// mcpReport is what e2e/testdata/mcp-client/client.cjs saw.
type mcpReport struct {
	Capabilities map[string]any `json:"capabilities"`
	Tools        []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  struct {
			ReadOnlyHint bool `json:"readOnlyHint"`
		} `json:"annotations"`
	} `json:"tools"`
	ReadSmall, ReadLarge, Command, Workflow, Skill, OldName mcpCall
	Artifact                                                struct {
		Error    string `json:"error"`
		LinkMIME string `json:"link_mime"`
		ReadMIME string `json:"read_mime"`
		Bytes    int    `json:"bytes"`
	} `json:"artifact"`
	CompletePrompt, CompleteSkill struct {
		Error  string   `json:"error"`
		Values []string `json:"values"`
	}
}

// mcpCall is a tools/call result as the SDK returned it, or the error it
// threw.
type mcpCall struct {
	Error   string `json:"error"`
	IsError bool   `json:"isError"`
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
}

func (r *mcpReport) UnmarshalJSON(b []byte) error {
	type plain mcpReport
	var aux struct {
		*plain
		ReadSmall      mcpCall         `json:"read_small"`
		ReadLarge      mcpCall         `json:"read_large"`
		Command        mcpCall         `json:"command"`
		Workflow       mcpCall         `json:"workflow"`
		Skill          mcpCall         `json:"skill"`
		OldName        mcpCall         `json:"old_name"`
		CompletePrompt json.RawMessage `json:"complete_prompt"`
		CompleteSkill  json.RawMessage `json:"complete_skill"`
	}
	aux.plain = (*plain)(r)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	r.ReadSmall, r.ReadLarge, r.Command, r.Workflow, r.Skill, r.OldName = aux.ReadSmall, aux.ReadLarge, aux.Command, aux.Workflow, aux.Skill, aux.OldName
	_ = json.Unmarshal(aux.CompletePrompt, &r.CompletePrompt)
	_ = json.Unmarshal(aux.CompleteSkill, &r.CompleteSkill)
	return nil
}

// mcpClientProject is the project the TypeScript client plays against: a
// small file, one past the result size limit, a command with positional
// and named arguments, a skill and a workflow that only reads.
func mcpClientProject(t *testing.T) string {
	t.Helper()
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{
		"a.txt":   "hello\n",
		"big.txt": strings.Repeat("a line of a file too large to return inline\n", 4000),
		".jido/commands/explain.md": "---\ndescription: Explain a file\nargument-hint: <path>\n---\n" +
			"Explain {{topic}} in $1 for {{audience}}.\n",
		".jido/skills/review/SKILL.md": "---\nname: review\ndescription: Review code for bugs\n---\nLook for bugs.\n",
		".jido/workflows/peek.md": "---\nname: peek\ndescription: Read a file\ninputs:\n  path: {type: string}\n---\n" +
			"```yaml\nsteps:\n  - {id: r, tool: read_file, args: {path: \"{{inputs.path}}\"}}\n```\n",
	})
	return proj
}

// runMCPClient runs the TypeScript client with args and decodes its
// report. It skips the test only when node is not installed.
func runMCPClient(t *testing.T, args ...string) mcpReport {
	t.Helper()
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: this test drives the MCP gateway with the official MCP TypeScript SDK, which needs Node.js 18 or later; install it and run make tools")
	}
	if checkoutRootErr != nil {
		t.Fatal(checkoutRootErr)
	}
	root := checkoutRoot
	modules := filepath.Join(root, "bin", "mcp-client")
	if _, err := os.Stat(filepath.Join(modules, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the MCP TypeScript SDK is not installed in %s: run make tools (it runs npm ci for e2e/testdata/mcp-client there)", modules)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{filepath.Join(root, "e2e", "testdata", "mcp-client", "client.cjs")}, args...)...)
	cmd.Env = append(os.Environ(), "JIDO_MCP_MODULES="+modules)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, stderr.String())
	}
	var r mcpReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("the TypeScript client's report: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("stderr of the client and the server:\n%s", stderr.String())
	return r
}

// TestMCPTypeScriptClient (issue 21, items 12 and 17): the official MCP
// TypeScript SDK client, over stdio (`jido-bus mcp`, as an IDE launches
// it) and over streamable HTTP (`serve --http`), uses every kind of tool
// without the SDK refusing a result: a result past the size limit has
// structured content the tool's output schema admits (the SDK threw "has
// an output schema but did not return structured content"), and its
// artifact has one media type in the link and in resources/read; asset
// tools are named <kind>_<name> (MCP listed command.explain beside
// command_git-commit), a command's named arguments are in its schema,
// descriptions are sentences, read_file's text is the file's text, a
// workflow that only reads is offered without commands.programs, and
// completion/complete answers prompt arguments and resource templates.
func TestMCPTypeScriptClient(t *testing.T) {
	proj := mcpClientProject(t)
	t.Run("stdio", func(t *testing.T) {
		checkMCPReport(t, runMCPClient(t, "stdio", tools.JidoBus, "mcp", "--project", proj, "--id", "ts", "--data-dir", t.TempDir()))
	})
	t.Run("http", func(t *testing.T) {
		node := StartNode(t, tools, t.TempDir(), "--http", "127.0.0.1:0", "--open", proj+"=ts")
		checkMCPReport(t, runMCPClient(t, "http", httpBase(t, node)+"/mcp/ts"))
	})
}

func checkMCPReport(t *testing.T, r mcpReport) {
	t.Helper()
	if _, ok := r.Capabilities["completions"]; !ok {
		t.Errorf("capabilities %v: no completions", r.Capabilities)
	}
	byName := map[string]int{}
	for i, tl := range r.Tools {
		byName[tl.Name] = i
		if strings.ContainsAny(tl.Name, ".:") {
			t.Errorf("tool %s: asset tools are <kind>_<name>, like the built-ins", tl.Name)
		}
		if d := strings.TrimSpace(tl.Description); !strings.HasSuffix(d, ".") {
			t.Errorf("tool %s: description %q is not a sentence", tl.Name, tl.Description)
		}
	}
	var listed []string
	for _, tl := range r.Tools {
		listed = append(listed, tl.Name)
	}
	for _, want := range []string{"read_file", "command_explain", "skill_review", "workflow_peek", "skill_graph_search"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("tools: no %s among %v", want, listed)
		}
	}
	if i, ok := byName["command_explain"]; !ok || !strings.Contains(string(r.Tools[i].InputSchema), `"topic"`) || !strings.Contains(string(r.Tools[i].InputSchema), `"audience"`) {
		t.Errorf("command_explain's input schema does not name {{topic}} and {{audience}}")
	}
	if i, ok := byName["workflow_peek"]; !ok || !r.Tools[i].Annotations.ReadOnlyHint {
		t.Errorf("workflow_peek is not offered read-only")
	}

	if c := r.ReadSmall; c.Error != "" || c.IsError || len(c.Content) == 0 || c.Content[0].Text != "hello\n" || c.StructuredContent["content"] != "hello\n" {
		t.Errorf("read_file a.txt: %+v; want the file's text as text, the output as structured content", c)
	}
	big := r.ReadLarge
	if big.Error != "" || big.IsError {
		t.Errorf("read_file big.txt, past the size limit: %s %+v", big.Error, big.Content)
	}
	if big.StructuredContent["artifact"] == nil {
		t.Errorf("read_file big.txt: structured content %v, want the artifact's stand-in", big.StructuredContent)
	}
	if a := r.Artifact; a.Error != "" || a.LinkMIME == "" || a.LinkMIME != a.ReadMIME || a.Bytes < 100_000 {
		t.Errorf("the artifact: %+v; want the whole output, one media type in the link and in resources/read", a)
	}
	for name, c := range map[string]mcpCall{"command_explain": r.Command, "workflow_peek": r.Workflow, "skill_review": r.Skill} {
		if c.Error != "" || c.IsError || c.StructuredContent == nil {
			t.Errorf("%s: %s %+v", name, c.Error, c.Content)
		}
	}
	if txt := r.Command.Content; len(txt) == 0 || !strings.Contains(txt[0].Text, "Explain greeting in a.txt for newcomers.") {
		t.Errorf("command_explain: %+v", r.Command.Content)
	}
	if txt := r.Skill.Content; len(txt) == 0 || txt[0].Text != "Look for bugs.\n" {
		t.Errorf("skill_review's text: %+v, want the skill's body", r.Skill.Content)
	}
	if old := r.OldName; !strings.Contains(old.Error, "call command_explain") {
		t.Errorf("calling the old name command.explain: %+v, want it refused naming command_explain", old)
	}
	if c := r.CompletePrompt; c.Error != "" || !slices.Equal(c.Values, []string{"big.txt"}) {
		t.Errorf("completion of explain's arguments \"bi\": %+v, want big.txt", c)
	}
	if c := r.CompleteSkill; c.Error != "" || !slices.Equal(c.Values, []string{"review"}) {
		t.Errorf("completion of a skill's name \"r\": %+v, want review", c)
	}
}
