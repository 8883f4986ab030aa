package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// durableWorkflow is a workflow of three run_command steps; the second
// writes "two-start", waits for the file release, then writes "two".
// idempotent says whether the second step is marked idempotent: true.
func durableWorkflow(name string, idempotent bool) string {
	mark := ""
	if idempotent {
		mark = "    idempotent: true\n"
	}
	return "---\nname: " + name + "\ndescription: Three steps, the second waits.\n---\n\n```yaml\nsteps:\n" +
		"  - id: one\n    tool: run_command\n    args: {argv: [sh, -c, \"echo one >> steps.log\"]}\n" +
		"  - id: two\n    tool: run_command\n" + mark +
		"    args: {argv: [sh, -c, \"echo two-start >> steps.log; while [ ! -f release ]; do sleep 0.05; done; echo two >> steps.log\"]}\n" +
		"  - id: three\n    tool: run_command\n    args: {argv: [sh, -c, \"echo three >> steps.log\"]}\n```\n"
}

// startWorkflowCall runs 'project call p1 TOOL --call-id ID' in the
// background: the caller whose request dies with the node.
func startWorkflowCall(t *testing.T, url, tool, id string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, tools.JidoBus, "project", "call", "p1", tool, "--call-id", id, "--nats-url", url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
}

func readSteps(t *testing.T, proj string) string {
	b, err := os.ReadFile(filepath.Join(proj, "steps.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// killMidWorkflow opens project p1 with the three-step workflow name (its
// second step idempotent: or not), calls it under the call id callID,
// kills the node with kill -9 while the second step runs, and starts the
// node again on the same data dir: the restarted node and the project.
func killMidWorkflow(t *testing.T, name string, idempotent bool, callID string) (*Node, string) {
	t.Helper()
	dataDir := t.TempDir()
	node := StartNode(t, tools, dataDir)
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{".jido/workflows/" + name + ".md": durableWorkflow(name, idempotent)})
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	writeProjectTree(t, filepath.Dir(policy), map[string]string{"policy.yaml": "commands:\n  programs: [sh, sleep]\n"})
	tools.Run(t, "project", "open", proj, "--id", "p1", "--policy", policy, "--nats-url", node.URL)

	startWorkflowCall(t, node.URL, "workflow_"+name, callID)
	testkit.Eventually(t, "step two running", func() bool { return readSteps(t, proj) == "one\ntwo-start\n" })
	node.Kill(t)
	return StartNode(t, tools, dataDir), proj
}

// TestWorkflowResumesAfterKill: a workflow called with project call runs
// its first step, the node is killed (kill -9) while its second runs,
// and the restarted node takes the run up: the first step is not run
// again, the second — marked idempotent: true — runs again, the third
// runs, and the call's outcome is project.tool.completed under the id
// the caller gave, as if the node had never stopped.
func TestWorkflowResumesAfterKill(t *testing.T) {
	node, proj := killMidWorkflow(t, "durable", true, "wf-1")
	run := func(args ...string) string { return tools.Run(t, append(args, "--nats-url", node.URL)...) }
	testkit.Eventually(t, "step two run again after the restart", func() bool {
		return readSteps(t, proj) == "one\ntwo-start\ntwo-start\n"
	})
	writeProjectTree(t, proj, map[string]string{"release": ""})
	testkit.Eventually(t, "the workflow's completion in the project's stream", func() bool {
		return strings.Contains(run("log", "show", "project/p1", "--type", "project.tool.completed", "-o", "json"), `"call_id":"wf-1"`)
	})
	if got := readSteps(t, proj); got != "one\ntwo-start\ntwo-start\ntwo\nthree\n" {
		t.Errorf("steps.log after the resumed run:\n%s", got)
	}
	failed := run("log", "show", "project/p1", "--type", "project.tool.failed", "-o", "json")
	if !strings.Contains(failed, `"type":"interrupted"`) || !strings.Contains(failed, `step \"two\" (2 of 3, run_command)`) {
		t.Errorf("the interrupted step is not recorded failed, interrupted, by name:\n%s", failed)
	}
	if strings.Contains(failed, `"call_id":"wf-1"`) {
		t.Errorf("the resumed workflow is recorded failed:\n%s", failed)
	}
	// The completion carries every step's output, the third's included.
	done := run("log", "show", "project/p1", "--type", "project.tool.completed", "-o", "json")
	if strings.Count(done, `"parent":"wf-1"`) != 3 {
		t.Errorf("want three completed steps of wf-1 (one before the kill, two after):\n%s", done)
	}
}

// TestWorkflowInterruptedStepNotRunTwice: the same kill -9 while a step
// that runs a program is running, and that step not marked idempotent:
// the restarted node does not run it a second time, nor the steps after
// it; the workflow is recorded failed, interrupted, naming the step to
// check.
func TestWorkflowInterruptedStepNotRunTwice(t *testing.T) {
	node, proj := killMidWorkflow(t, "strict", false, "wf-2")
	run := func(args ...string) string { return tools.Run(t, append(args, "--nats-url", node.URL)...) }
	var failed string
	testkit.Eventually(t, "the workflow's failure in the project's stream", func() bool {
		failed = run("log", "show", "project/p1", "--type", "project.tool.failed", "-o", "json")
		return strings.Contains(failed, `"call_id":"wf-2"`)
	})
	for _, want := range []string{`"type":"interrupted"`, `step \"two\" (2 of 3, run_command)`, "is not run again", `check what step \"two\"`} {
		if !strings.Contains(failed, want) {
			t.Errorf("the workflow's failure does not say %s:\n%s", want, failed)
		}
	}
	// Let a step two still running (it should not be) finish, then check
	// nothing ran after the restart.
	writeProjectTree(t, proj, map[string]string{"release": ""})
	run("project", "call", "p1", "read_file", `{"path":"release"}`)
	if got := readSteps(t, proj); got != "one\ntwo-start\n" {
		t.Errorf("steps.log: a step ran after the restart:\n%s", got)
	}
	if done := run("log", "show", "project/p1", "--type", "project.tool.completed", "-o", "json"); strings.Contains(done, `"call_id":"wf-2"`) {
		t.Errorf("the interrupted workflow is recorded completed:\n%s", done)
	}
}
