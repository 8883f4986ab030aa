package projects

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// hookTool is the tool name a local command hook is checked under: it
// passes the project's policy exactly as a run_command call would (the
// tool allowed, the program on commands.programs), so a project cannot
// run through a hook what its policy refuses the model.
const hookTool = "run_command"

// maxHookOutput bounds what a command hook may print.
const maxHookOutput = 1 << 20

// RunHook runs argv, project id's local command hook, in its sandbox as
// run_command would run it (the policy's commands allow-list, the
// confinement and limits of its commands), with stdin on its standard
// input and at most timeout: its stdout, stderr and exit code, or why it
// could not run.
func (e *Engine) RunHook(ctx context.Context, id string, argv []string, stdin []byte, timeout time.Duration) ([]byte, []byte, int, error) {
	p, err := e.usable(id)
	if err != nil {
		return nil, nil, 0, err
	}
	spec, err := p.box().Command(hookTool, policy.CommandRequest{Argv: argv}, os.Environ())
	if err != nil {
		return nil, nil, 0, fmt.Errorf("the project's policy refuses the hook command %s as it would refuse it to run_command: %w", argv[0], err)
	}
	if err := hookOutsideReach(spec, p.dataDir); err != nil {
		return nil, nil, 0, err
	}
	spec.Stdin = stdin
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := policy.Exec(cctx, spec, policy.ExecOptions{MaxOutput: maxHookOutput})
	if err != nil {
		if res != nil && res.Killed == "deadline" && ctx.Err() == nil {
			return nil, nil, 0, fmt.Errorf("the hook command %s did not answer within hooks.timeout_ms (%s) and was killed", argv[0], timeout)
		}
		if errors.Is(err, context.Canceled) {
			return nil, nil, 0, err
		}
		return nil, nil, 0, fmt.Errorf("the hook command %s: %w", argv[0], err)
	}
	return res.Stdout, res.Stderr, res.ExitCode, nil
}

// hookOutsideReach refuses a hook program inside the project but outside
// its data dir: the model may write there (write_file, run_command), and
// a guard the guarded can rewrite guards nothing. The data dir is
// read-only to tools and commands; a hook the project ships lives there.
func hookOutsideReach(spec *policy.CommandSpec, dataDir string) error {
	prog := spec.Program
	if real, err := filepath.EvalSymlinks(prog); err == nil {
		prog = real
	}
	rel, err := filepath.Rel(spec.Root, prog)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	if top, _, _ := strings.Cut(rel, "/"); top == dataDir {
		return nil
	}
	return fmt.Errorf("the hook command %s is inside the project, where the model may rewrite it; put it under %s/ (which tools and commands cannot change) or outside the project", spec.Program, dataDir)
}
