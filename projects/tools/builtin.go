package tools

import (
	"time"
)

// Limits bound what the built-in tools read and return. The zero value is
// the defaults.
type Limits struct {
	// MaxFileBytes is the largest file read_file and edit_file read
	// (too_large past it); 0 means 1 MiB.
	MaxFileBytes int64
	// MaxEntries bounds list_dir's entries and glob's matches; 0 means 1000.
	MaxEntries int
	// MaxMatches bounds grep's matching lines; 0 means 500.
	MaxMatches int
	// MaxGrepBytes bounds the bytes of lines grep returns; 0 means 48 KiB,
	// so a full grep result still fits under the runner's default output cap
	// and reaches the model inline rather than as an artifact.
	MaxGrepBytes int
	// MaxGrepFileBytes: grep skips larger files (and says how many); 0
	// means 4 MiB.
	MaxGrepFileBytes int64
	// Timeout of each file built-in; 0 means the runner's default.
	// run_command has its own (below).
	Timeout time.Duration
	// CommandTimeout is run_command's timeout when a call names none; 0
	// means 30s.
	CommandTimeout time.Duration
	// MaxCommandTimeout is the longest timeout a run_command call may ask
	// for; 0 means 10m (or CommandTimeout when that is longer).
	MaxCommandTimeout time.Duration
	// MaxCommandOutput, when set, caps the stdout and stderr a command may
	// write together below the project's commands.limits.output: past it
	// the command is killed (too_large). 0 leaves the policy's limit.
	MaxCommandOutput int64
	// MaxCommandInline bounds the bytes of stdout and stderr run_command
	// returns (their tails; truncated says so); 0 means 48 KiB, so the
	// result fits under the runner's default output cap.
	MaxCommandInline int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 1 << 20
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = 1000
	}
	if l.MaxMatches <= 0 {
		l.MaxMatches = 500
	}
	if l.MaxGrepBytes <= 0 {
		l.MaxGrepBytes = 48 << 10
	}
	if l.MaxGrepFileBytes <= 0 {
		l.MaxGrepFileBytes = 4 << 20
	}
	if l.CommandTimeout <= 0 {
		l.CommandTimeout = 30 * time.Second
	}
	if l.MaxCommandTimeout <= 0 {
		l.MaxCommandTimeout = max(10*time.Minute, l.CommandTimeout)
	}
	l.CommandTimeout = min(l.CommandTimeout, l.MaxCommandTimeout)
	if l.MaxCommandInline <= 0 {
		l.MaxCommandInline = 48 << 10
	}
	return l
}

// Builtins are the tools over the project's Sandbox: the file tools
// read_file, list_dir, glob, grep, write_file and edit_file, and
// run_command. Every path they take is resolved and authorized by the
// Sandbox, for the tool's own name; run_command runs only the programs the
// policy lists (none by default), confined by the sandbox-exec helper.
func Builtins(l Limits) []Tool {
	l = l.withDefaults()
	ts := []Tool{readFileTool(l), listDirTool(l), globTool(l), grepTool(l), writeFileTool(), editFileTool(l)}
	for i := range ts {
		ts[i].Timeout = l.Timeout
	}
	ts = append(ts, runCommandTool(l))
	// Each reads at most a bounded amount (read_file, list_dir,
	// write_file, edit_file) or checks its context as it goes (glob,
	// grep, run_command).
	for i := range ts {
		ts[i].HonoursContext = true
	}
	return ts
}
