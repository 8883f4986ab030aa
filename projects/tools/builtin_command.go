package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// commandGrace is what the runner's timeout of run_command adds to the
// longest command timeout: Exec needs a moment after the kill to drain the
// pipes and report, and the command's own timeout must be the one that
// fires, so the caller gets the output captured so far.
const commandGrace = 5 * time.Second

type runCommandArgs struct {
	Argv    []string `json:"argv"`
	Cwd     string   `json:"cwd"`
	Timeout string   `json:"timeout"`
}

type runCommandOutput struct {
	ExitCode   int    `json:"exit_code"`
	Signal     string `json:"signal,omitempty"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	DurationMS int64  `json:"duration_ms"`
	Truncated  bool   `json:"truncated,omitempty"`
	Warning    string `json:"warning,omitempty"`
}

// runCommandTool runs a program through the Sandbox's Command check and
// policy.Exec: the program must be listed in commands.programs, the
// working directory resolves inside the root, and the command runs
// confined (its own namespaces and view of the file system, Landlock, the
// limits of commands.limits), ended with everything it started at its
// timeout or at a limit. A non-zero exit is an output, not an error: the
// caller wants the compiler's complaints.
func runCommandTool(l Limits) Tool {
	return Tool{
		Name: "run_command",
		Description: fmt.Sprintf("Run a program of the project's policy (commands.programs) with an argv, never a shell line, "+
			"in a working directory inside the project (cwd, default the root). It sees only the project, a private /tmp and the system's programs, "+
			"can write only inside the project, has no network unless the policy allows it, and is ended with everything it started when it ends "+
			"or reaches a limit of the policy (processes, file size, disk written, temp size, CPU time, output: limit_exceeded). "+
			"A non-zero exit code is reported, not an error. The timeout is a Go duration (\"30s\", \"2m\"; default %s, at most %s); "+
			"past it the command is killed. Each of stdout and stderr keeps its last bytes when long (truncated is then true).",
			l.CommandTimeout, l.MaxCommandTimeout),
		InputSchema: []byte(`{"type":"object","properties":{
			"argv":{"type":"array","minItems":1,"items":{"type":"string"},"description":"the program and its arguments, e.g. [\"go\",\"test\",\"./...\"]"},
			"cwd":{"type":"string","description":"working directory relative to the project root (default the root)"},
			"timeout":{"type":"string","pattern":"^[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))*$","description":"how long the command may run, a Go duration such as \"30s\""}},
			"required":["argv"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{
			"exit_code":{"type":"integer","description":"the program's exit code; -1 when a signal ended it"},
			"signal":{"type":"string"},"stdout":{"type":"string"},"stderr":{"type":"string"},
			"duration_ms":{"type":"integer","minimum":0},"truncated":{"type":"boolean"},"warning":{"type":"string"}},
			"required":["exit_code","stdout","stderr","duration_ms"]}`),
		Safety:  Safety{Runs: true},
		Timeout: l.MaxCommandTimeout + commandGrace,
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a runCommandArgs
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			timeout, err := commandTimeout(a.Timeout, l)
			if err != nil {
				return nil, err
			}
			spec, err := c.Sandbox.Command(c.Name, policy.CommandRequest{Argv: a.Argv, Dir: a.Cwd}, os.Environ())
			if err != nil {
				return nil, err
			}
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			res, err := policy.Exec(cctx, spec, policy.ExecOptions{MaxOutput: l.MaxCommandOutput})
			if err != nil {
				if e, ok := errors.AsType[*bus.Error](err); ok && e.Type == ReasonLimitExceeded && res != nil {
					return nil, &Error{Type: ReasonLimitExceeded, Message: e.Message, Details: runOutput(res, l.MaxCommandInline)}
				}
				if res != nil && res.Killed == "deadline" && ctx.Err() == nil {
					out := runOutput(res, l.MaxCommandInline)
					return nil, &Error{Type: ReasonTimeout,
						Message: fmt.Sprintf("run_command %s ran past its timeout of %s and was killed with everything it started; give a longer timeout (at most %s) or a narrower command",
							strings.Join(a.Argv, " "), timeout, l.MaxCommandTimeout),
						Details: out}
				}
				return nil, err
			}
			return runOutput(res, l.MaxCommandInline), nil
		},
	}
}

// commandTimeout parses a call's timeout: "" is the default, and a
// timeout over the limit is refused rather than silently cut, so the
// caller learns the limit.
func commandTimeout(s string, l Limits) (time.Duration, error) {
	if s == "" {
		return l.CommandTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, Errorf(ReasonInvalidArgs, "run_command timeout %q is not a positive Go duration such as \"30s\" or \"2m\"", s)
	}
	if d > l.MaxCommandTimeout {
		return 0, Errorf(ReasonInvalidArgs, "run_command timeout %s is over the limit of %s; give at most %s", d, l.MaxCommandTimeout, l.MaxCommandTimeout)
	}
	return d, nil
}

// runOutput is res as the tool returns it, stdout and stderr cut to
// inline bytes together. The tail of each stream is kept: a failing build
// or test says what went wrong at the end.
func runOutput(res *policy.CommandResult, inline int) runCommandOutput {
	stdout, stderr := res.Stdout, res.Stderr
	truncated := false
	if len(stdout)+len(stderr) > inline {
		truncated = true
		// stderr gets a third of the budget unless it needs less; stdout
		// the rest.
		errBudget := min(len(stderr), inline/3)
		outBudget := min(len(stdout), inline-errBudget)
		errBudget = min(len(stderr), inline-outBudget)
		stdout, stderr = tail(stdout, outBudget), tail(stderr, errBudget)
	}
	return runCommandOutput{
		ExitCode:   res.ExitCode,
		Signal:     res.Signal,
		Stdout:     strings.ToValidUTF8(string(stdout), "\uFFFD"),
		Stderr:     strings.ToValidUTF8(string(stderr), "\uFFFD"),
		DurationMS: res.Duration.Milliseconds(),
		Truncated:  truncated,
		Warning:    res.Warning,
	}
}

// tail is the last n bytes of b, starting at a rune boundary.
func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[len(b)-n:]
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
