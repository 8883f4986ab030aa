package assets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

var (
	// workflowName is a workflow's name: it becomes the tool
	// workflow.<name>, so it keeps to what tool-use APIs accept.
	workflowName = regexp.MustCompile(`^[a-z0-9]+(?:[-_][a-z0-9]+)*$`)
	// identifier is a step id or an input name: templates split on '.',
	// so neither may hold one.
	identifier = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	// fenceOpen is a fenced code block's opening line; group 1 the fence,
	// group 2 the info string's first word.
	fenceOpen = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})[ \t]*([^ \t`]*)")
)

// workflowFront is a workflow's front matter.
type workflowFront struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Inputs      ast.Node `yaml:"inputs"`
}

// workflowStep is one step as written.
type workflowStep struct {
	ID      string         `yaml:"id"`
	Tool    string         `yaml:"tool"`
	Command string         `yaml:"command"`
	Args    map[string]any `yaml:"args"`
	// Idempotent: the author says running the step twice does no harm
	// (see Step.Idempotent).
	Idempotent bool `yaml:"idempotent"`
}

// loadError is a problem at a line of the file being parsed.
type loadError struct {
	line   int
	reason string
}

func (e *loadError) Error() string { return e.reason }

func errAt(line int, format string, a ...any) error {
	return &loadError{line: line, reason: fmt.Sprintf(format, a...)}
}

// ParseWorkflow parses one workflow file; file names it in diagnostics and
// in the result's Source (whose Hash and LoadedAt LoadWorkflows fills).
// It returns the workflow, or nil and the reason it was refused: one
// problem is enough to refuse a file, so at most one diagnostic is
// returned. It never panics on any input.
func ParseWorkflow(file string, data []byte, known ToolNames) (*Workflow, []Diagnostic) {
	w, err := parseWorkflow(data, known)
	if err != nil {
		d := Diagnostic{File: file, Reason: err.Error()}
		var le *loadError
		if errors.As(err, &le) {
			d.Line = le.line
		}
		return nil, []Diagnostic{d}
	}
	w.Source.File = file
	return w, nil
}

func parseWorkflow(data []byte, known ToolNames) (*Workflow, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not UTF-8: save the file as UTF-8")
	}
	front, frontLine, body, bodyLine, err := requireFrontMatter(data)
	if err != nil {
		return nil, errAt(1, "%v", err)
	}
	var fm workflowFront
	if err := decodeYAML(front, &fm, frontLine, "front matter"); err != nil {
		return nil, err
	}
	w := &Workflow{Name: fm.Name, Description: strings.TrimSpace(fm.Description)}
	switch {
	case fm.Name == "":
		return nil, errAt(frontLine, "front matter has no name: add name: <a-z0-9, - or _>")
	case len(fm.Name) > 64 || !workflowName.MatchString(fm.Name):
		return nil, errAt(frontLine, "front matter name %q: use 1-64 of a-z 0-9 with single - or _ between them", fm.Name)
	case w.Description == "":
		return nil, errAt(frontLine, "front matter has no description: say what the workflow does, for the model choosing it")
	case len(w.Description) > 1024:
		return nil, errAt(frontLine, "front matter description is %d bytes; keep it to 1024", len(w.Description))
	}
	if w.Inputs, err = parseInputs(fm.Inputs, frontLine); err != nil {
		return nil, err
	}
	block, blockLine, err := stepsBlock(body, bodyLine)
	if err != nil {
		return nil, err
	}
	if w.Steps, err = parseSteps(block, blockLine, w.Inputs, known); err != nil {
		return nil, err
	}
	return w, nil
}

// decodeYAML decodes src strictly (unknown keys and duplicate keys are
// errors) and turns the library's error into one at a file line; offset
// is the file line src starts on.
func decodeYAML(src []byte, v any, offset int, what string) error {
	if err := yaml.UnmarshalWithOptions(src, v, yaml.Strict()); err != nil {
		return yamlError(err, offset, what)
	}
	return nil
}

func yamlError(err error, offset int, what string) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		return errAt(offset+ye.GetToken().Position.Line-1, "%s: %s", what, ye.GetMessage())
	}
	return errAt(offset, "%s: %v", what, err)
}

func parseInputs(node ast.Node, frontLine int) ([]Input, error) {
	if node == nil {
		return nil, nil
	}
	if _, null := node.(*ast.NullNode); null {
		return nil, nil
	}
	line := frontLine + nodeLine(node) - 1
	m, ok := node.(ast.MapNode)
	if !ok {
		return nil, errAt(line, "front matter inputs: want a mapping of input name to JSON Schema")
	}
	var inputs []Input
	for it := m.MapRange(); it.Next(); {
		name := tokenValue(it.Key())
		at := frontLine + nodeLine(it.Key()) - 1
		if !identifier.MatchString(name) {
			return nil, errAt(at, "input name %q: use 1-64 of A-Z a-z 0-9 _ -", name)
		}
		var doc any
		if err := yaml.NodeToValue(it.Value(), &doc); err != nil {
			return nil, yamlError(err, frontLine, fmt.Sprintf("input %q", name))
		}
		schema, err := json.Marshal(doc)
		if err != nil {
			return nil, errAt(at, "input %q: the schema is not JSON: %v", name, err)
		}
		var jdoc any
		if err := json.Unmarshal(schema, &jdoc); err != nil {
			return nil, errAt(at, "input %q: the schema is not JSON: %v", name, err)
		}
		compiled, err := compileInputSchema(name, jdoc)
		if err != nil {
			return nil, errAt(at, "input %q: not a valid JSON Schema (draft 2020-12): %v", name, err)
		}
		in := Input{Name: name, Schema: schema, compiled: compiled}
		if obj, ok := jdoc.(map[string]any); ok {
			in.Default, in.HasDefault = obj["default"]
		}
		if in.HasDefault {
			if err := compiled.Validate(in.Default); err != nil {
				return nil, errAt(at, "input %q: its default fails its own schema: %s", name, describeValidation(err))
			}
		}
		inputs = append(inputs, in)
	}
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].Name < inputs[j].Name })
	return inputs, nil
}

// stepsBlock finds the fenced ```yaml (or ```yml) block whose first
// non-blank, non-comment line starts with "steps:"; other yaml blocks are
// examples in the prose. It returns the block's text and the file line of
// its first line. Exactly one such block must exist.
func stepsBlock(body []byte, bodyLine int) ([]byte, int, error) {
	lines := strings.SplitAfter(string(body), "\n")
	var found []byte
	foundLine := 0
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(strings.TrimRight(lines[i], "\r\n"))
		if m == nil {
			continue
		}
		fence, info := m[1], strings.ToLower(m[2])
		start := i + 1
		end := start
		for end < len(lines) && !isFenceClose(lines[end], fence) {
			end++
		}
		i = end
		if info != "yaml" && info != "yml" {
			continue
		}
		text := strings.Join(lines[start:min(end, len(lines))], "")
		if !startsWithSteps(text) {
			continue
		}
		if found != nil {
			return nil, 0, errAt(bodyLine+start-1, "a second ```yaml block with steps: (the first is at line %d); keep one", foundLine)
		}
		found, foundLine = []byte(text), bodyLine+start
	}
	if found == nil {
		return nil, 0, errors.New("no ```yaml block with steps: in the body; add one listing the steps ({id, tool | command, args})")
	}
	return found, foundLine, nil
}

func isFenceClose(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == "" && strings.HasPrefix(t, fence)
}

func startsWithSteps(text string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return strings.HasPrefix(l, "steps:")
	}
	return false
}

func parseSteps(block []byte, blockLine int, inputs []Input, known ToolNames) ([]Step, error) {
	var doc struct {
		Steps ast.Node `yaml:"steps"`
	}
	if err := decodeYAML(block, &doc, blockLine, "steps block"); err != nil {
		return nil, err
	}
	seq, ok := doc.Steps.(*ast.SequenceNode)
	if !ok {
		return nil, errAt(blockLine, "steps: want a list of steps ({id, tool | command, args})")
	}
	if len(seq.Values) == 0 {
		return nil, errAt(blockLine, "steps: the list has no steps")
	}
	if known == nil {
		known = func(string) bool { return false }
	}
	steps := make([]Step, 0, len(seq.Values))
	index := map[string]int{}
	later := laterIDs(seq)
	for i, node := range seq.Values {
		line := blockLine + nodeLine(node) - 1
		if m, ok := node.(ast.MapNode); ok {
			// The sequence entry's token is its first key; the "-" may sit
			// a line above for a block mapping, but a key's line is what a
			// person looks for.
			if it := m.MapRange(); it.Next() {
				line = blockLine + nodeLine(it.Key()) - 1
			}
		}
		var ws workflowStep
		if err := yaml.NodeToValue(node, &ws, yaml.Strict()); err != nil {
			return nil, yamlError(err, blockLine, fmt.Sprintf("step %d", i+1))
		}
		s, err := checkStep(ws, line, i, index, later, steps, inputs, known)
		if err != nil {
			return nil, err
		}
		index[s.ID] = i
		steps = append(steps, s)
	}
	return steps, nil
}

// laterIDs maps every step id written in the list to its 1-based
// position, so a reference to a step that runs later can be told apart
// from a reference to no step at all.
func laterIDs(seq *ast.SequenceNode) map[string]int {
	ids := map[string]int{}
	for i, node := range seq.Values {
		m, ok := node.(ast.MapNode)
		if !ok {
			continue
		}
		for it := m.MapRange(); it.Next(); {
			if tokenValue(it.Key()) == "id" {
				if _, seen := ids[tokenValue(it.Value())]; !seen {
					ids[tokenValue(it.Value())] = i + 1
				}
			}
		}
	}
	return ids
}

func checkStep(ws workflowStep, line, i int, index, later map[string]int, earlier []Step, inputs []Input, known ToolNames) (Step, error) {
	s := Step{ID: ws.ID, Command: ws.Command, Line: line, Idempotent: ws.Idempotent}
	switch {
	case ws.ID == "":
		return s, errAt(line, "step %d has no id: add id: <A-Z a-z 0-9 _ ->", i+1)
	case !identifier.MatchString(ws.ID):
		return s, errAt(line, "step id %q: use 1-64 of A-Z a-z 0-9 _ - (no dots: templates split on them)", ws.ID)
	}
	if j, dup := index[ws.ID]; dup {
		return s, errAt(line, "duplicate step id %q (first at line %d); give each step its own id", ws.ID, earlier[j].Line)
	}
	switch {
	case (ws.Tool == "") == (ws.Command == ""):
		return s, errAt(line, "step %q: give exactly one of tool or command", ws.ID)
	case ws.Tool != "":
		s.Tool = ws.Tool
		if strings.HasPrefix(ws.Tool, KindWorkflow+"_") || strings.HasPrefix(ws.Tool, KindWorkflow+".") {
			return s, errAt(line, "step %q: a workflow cannot call another workflow (%s); copy its steps in", ws.ID, ws.Tool)
		}
		if renamed, ok := RenamedTool(ws.Tool); ok && !known(ws.Tool) {
			return s, errAt(line, "step %q: tool %q is named %s now (asset tools are <kind>_<name>); write tool: %s", ws.ID, ws.Tool, renamed, renamed)
		}
		if !known(ws.Tool) {
			return s, errAt(line, "step %q: unknown tool %q; see the project's tools for the names", ws.ID, ws.Tool)
		}
	default:
		s.Tool = ToolName(KindCommand, ws.Command)
		if !known(s.Tool) {
			return s, errAt(line, "step %q: unknown command %q; commands are the files in commands/ (git/commit.md is git:commit)", ws.ID, ws.Command)
		}
	}
	args, err := jsonValue(ws.Args)
	if err != nil {
		return s, errAt(line, "step %q: args are not JSON: %v", ws.ID, err)
	}
	s.Args, _ = args.(map[string]any)
	if s.Args == nil {
		s.Args = map[string]any{}
	}
	err = walkStrings(map[string]any(s.Args), func(str string) error {
		parts, err := parseTemplate(str)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if p.ref != nil {
				if err := checkRef(p.ref, ws.ID, index, later, inputs); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return s, errAt(line, "step %q: %v", ws.ID, err)
	}
	return s, nil
}

func checkRef(r *ref, self string, index, later map[string]int, inputs []Input) error {
	if r.kind == refInput {
		for _, in := range inputs {
			if in.Name == r.name {
				return nil
			}
		}
		return fmt.Errorf("{{%s}}: no input %q; declare it under inputs: in the front matter", r.text, r.name)
	}
	if r.name == self {
		return fmt.Errorf("{{%s}}: a step cannot use its own output", r.text)
	}
	if _, ok := index[r.name]; ok {
		return nil
	}
	if pos, ok := later[r.name]; ok {
		return fmt.Errorf("{{%s}}: step %q runs later (step %d); a step can only use the output of steps before it", r.text, r.name, pos)
	}
	return fmt.Errorf("{{%s}}: no step %q in this workflow", r.text, r.name)
}

// jsonValue returns v as encoding/json decodes it, so step args look the
// same as args that came over the API (numbers are float64).
func jsonValue(v any) (any, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.NewDecoder(bytes.NewReader(j)).Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// nodeLine and tokenValue read a node's first token, which every node the
// parser builds has; the guards keep a surprise from becoming a panic.
func nodeLine(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 1
	}
	return n.GetToken().Position.Line
}

func tokenValue(n ast.Node) string {
	if n == nil || n.GetToken() == nil {
		return ""
	}
	return n.GetToken().Value
}
