package assets

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestWorkflowResumeRunsOnlyTheStepsAfterDone: a resumed run uses the
// outputs of the steps that ran before the node stopped (a later step's
// template reads them) and calls only the steps after them.
func TestWorkflowResumeRunsOnlyTheStepsAfterDone(t *testing.T) {
	w, _ := parseOne(t, goodWorkflow)
	var calls []string
	var findArgs map[string]any
	done := []StepOutput{{ID: "read", Tool: "read_file", Output: map[string]any{"content": "from before"}}}
	outs, err := w.Resume(context.Background(), map[string]any{"path": "a"}, done, func(_ context.Context, tool string, args map[string]any) (any, error) {
		calls = append(calls, tool)
		if tool == "grep" {
			findArgs = args
		}
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(calls, ",") != "grep,command_git-commit" || len(outs) != 3 || outs[0].Output.(map[string]any)["content"] != "from before" {
		t.Fatalf("calls %v outputs %+v; want read taken as done and the two later steps run", calls, outs)
	}
	if findArgs["body"] != "from before" {
		t.Errorf("step find got body %v; want the done step's output", findArgs["body"])
	}
}

// TestWorkflowResumeRefusesAnEditedWorkflow: done steps that are no
// longer the workflow's first steps (it was edited while the node was
// down) stop the run before anything runs, saying to check and rerun.
func TestWorkflowResumeRefusesAnEditedWorkflow(t *testing.T) {
	w, _ := parseOne(t, goodWorkflow)
	done := []StepOutput{{ID: "read", Tool: "write_file", Output: "x"}}
	outs, err := w.Resume(context.Background(), map[string]any{"path": "a"}, done, func(context.Context, string, map[string]any) (any, error) {
		t.Fatal("a step ran")
		return nil, nil
	})
	var se *StepError
	if !errors.As(err, &se) || se.Index != 0 || !strings.Contains(err.Error(), "was edited since step 1") || len(outs) != 0 {
		t.Fatalf("outs %+v err %v; want a StepError at step 1 saying the workflow was edited", outs, err)
	}
}

// TestWorkflowStepIdempotent: idempotent: true on a step is read.
func TestWorkflowStepIdempotent(t *testing.T) {
	src := strings.Replace(goodWorkflow, "  - id: find\n    tool: grep\n", "  - id: find\n    tool: grep\n    idempotent: true\n", 1)
	w, diags := parseOne(t, src)
	if w == nil {
		t.Fatalf("refused: %v", diags)
	}
	if w.Steps[0].Idempotent || !w.Steps[1].Idempotent {
		t.Fatalf("idempotent read as %v, %v; want false, true", w.Steps[0].Idempotent, w.Steps[1].Idempotent)
	}
}
