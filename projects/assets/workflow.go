package assets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolNames reports whether name is a tool in the project's catalog
// ("read_file", "command_git-commit", …). The workflow loader takes it as a
// parameter because the catalog is built elsewhere, from built-in tools and
// from the same asset set; nil knows no tools.
type ToolNames func(name string) bool

// CallFunc runs one tool for a workflow step: in the node, the project's
// runner, so a step is authorised, limited and logged like any other call.
type CallFunc func(ctx context.Context, tool string, args map[string]any) (output any, err error)

// Workflow is a loaded workflows/*.md: a named list of steps run in order.
// It is immutable once loaded and safe for concurrent Runs.
//
// Invariants established by the loader: Name matches workflowName; every
// step has a unique id and names a tool the loader's ToolNames knew; every
// template in a step's args refers to a declared input or to an earlier
// step; every input schema compiled.
type Workflow struct {
	Name        string
	Description string
	// Inputs are the declared inputs, sorted by name.
	Inputs []Input
	Steps  []Step
	Source Source
}

// Input is one declared workflow input. It is required unless its schema
// has a "default", which a Run fills in when the input is not given.
type Input struct {
	Name string
	// Schema is the input's JSON Schema as written, compacted JSON.
	Schema     json.RawMessage
	Default    any
	HasDefault bool
	compiled   *jsonschema.Schema
}

// Step is one step of a workflow. Tool is the catalog name the step calls:
// the tool it names, or ToolName(KindCommand, <name>) for a command step.
type Step struct {
	ID      string
	Tool    string
	Command string // the command's name for a command step, else ""
	// Args are the step's arguments as decoded JSON values; strings in them
	// are templates (see workflow_template.go).
	Args map[string]any
	// Line is the 1-based line of the step in its file.
	Line int
	// Idempotent is the author's word (idempotent: true) that running
	// the step again does no harm: a step of this kind that was running
	// when the node stopped is run again when the workflow resumes,
	// where any other step that may change something stops it.
	Idempotent bool
}

// StepOutput is what one finished step returned.
type StepOutput struct {
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	Output any    `json:"output"`
}

// InputError says a Run's inputs were refused; no step ran. Input is the
// offending input's name, or "" when the inputs as a whole are wrong.
type InputError struct {
	Workflow string
	Input    string
	Reason   string
}

func (e *InputError) Error() string {
	if e.Input == "" {
		return fmt.Sprintf("workflow %s: inputs refused: %s", e.Workflow, e.Reason)
	}
	return fmt.Sprintf("workflow %s: input %q refused: %s", e.Workflow, e.Input, e.Reason)
}

// StepError says step Step (0-based Index) failed and the run stopped
// there; Err is the cause (the tool's error, a missing member, or the
// context's error when the run was cancelled before the step).
type StepError struct {
	Workflow string
	Step     string
	Index    int
	Of       int
	Tool     string
	Err      error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("workflow %s: step %q (%d of %d, %s) failed, later steps did not run: %v", e.Workflow, e.Step, e.Index+1, e.Of, e.Tool, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// Run checks inputs against the input schemas, fills in defaults, then runs
// the steps in order through call, each with its args rendered against the
// inputs and the earlier outputs. It stops at the first failure and
// returns the outputs of the steps that finished, with a *StepError; inputs
// that fail are an *InputError and nothing runs. Inputs are read as JSON
// (they are marshalled and decoded once), so a caller may pass Go values.
func (w *Workflow) Run(ctx context.Context, inputs map[string]any, call CallFunc) ([]StepOutput, error) {
	return w.Resume(ctx, inputs, nil, call)
}

// Resume is Run after the steps of done already ran (a run the node's
// restart takes up again): their outputs are used as if they had just
// returned, and the steps after them run. done must be the workflow's
// first steps, in order, by id and tool; a workflow edited since so that
// they no longer are is a *StepError at the first step that differs,
// and nothing runs. The outputs returned include done's.
func (w *Workflow) Resume(ctx context.Context, inputs map[string]any, done []StepOutput, call CallFunc) ([]StepOutput, error) {
	in, err := w.checkInputs(inputs)
	if err != nil {
		return nil, err
	}
	outs := make([]StepOutput, 0, len(w.Steps))
	byID := make(map[string]any, len(w.Steps))
	for i, d := range done {
		if i >= len(w.Steps) || w.Steps[i].ID != d.ID || w.Steps[i].Tool != d.Tool {
			return outs, &StepError{Workflow: w.Name, Step: d.ID, Index: i, Of: len(w.Steps), Tool: d.Tool,
				Err: fmt.Errorf("the workflow was edited since step %d (%q, %s) ran: its step %d is no longer that one, so the run cannot go on; check what the steps that ran did, then run the workflow again", i+1, d.ID, d.Tool, i+1)}
		}
		byID[d.ID] = d.Output
		outs = append(outs, d)
	}
	for i, s := range w.Steps {
		if i < len(done) {
			continue
		}
		fail := func(err error) error {
			return &StepError{Workflow: w.Name, Step: s.ID, Index: i, Of: len(w.Steps), Tool: s.Tool, Err: err}
		}
		if err := ctx.Err(); err != nil {
			return outs, fail(err)
		}
		args, err := renderValue(map[string]any(s.Args), in, byID)
		if err != nil {
			return outs, fail(err)
		}
		argMap, _ := args.(map[string]any)
		out, err := call(ctx, s.Tool, argMap)
		if err != nil {
			return outs, fail(err)
		}
		byID[s.ID] = out
		outs = append(outs, StepOutput{ID: s.ID, Tool: s.Tool, Output: out})
	}
	return outs, nil
}

func (w *Workflow) checkInputs(inputs map[string]any) (map[string]any, error) {
	refuse := func(name, reason string) error {
		return &InputError{Workflow: w.Name, Input: name, Reason: reason}
	}
	j, err := json.Marshal(inputs)
	if err != nil {
		return nil, refuse("", "not JSON: "+err.Error())
	}
	var in map[string]any
	if err := json.Unmarshal(j, &in); err != nil {
		return nil, refuse("", "not JSON: "+err.Error())
	}
	if in == nil {
		in = map[string]any{}
	}
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !slices.ContainsFunc(w.Inputs, func(i Input) bool { return i.Name == name }) {
			return nil, refuse(name, fmt.Sprintf("workflow %s has no input %q (it takes %s)", w.Name, name, w.inputList()))
		}
	}
	for _, input := range w.Inputs {
		v, ok := in[input.Name]
		if !ok {
			if !input.HasDefault {
				return nil, refuse(input.Name, "required and not given")
			}
			in[input.Name] = input.Default
			continue
		}
		if err := input.compiled.Validate(v); err != nil {
			return nil, refuse(input.Name, describeValidation(err))
		}
	}
	return in, nil
}

func (w *Workflow) inputList() string {
	if len(w.Inputs) == 0 {
		return "no inputs"
	}
	var b bytes.Buffer
	for i, in := range w.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in.Name)
	}
	return b.String()
}

// InputSchema is the JSON Schema of the workflow's inputs as one object,
// the input schema of the catalog's workflow.<name> tool: every input a
// property, those without a default required, nothing else allowed.
func (w *Workflow) InputSchema() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, in := range w.Inputs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(in.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(in.Schema)
		if !in.HasDefault {
			required = append(required, in.Name)
		}
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes()
}
