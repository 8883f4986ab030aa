package tools

import "time"

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
	// Timeout of each built-in; 0 means the runner's default.
	Timeout time.Duration
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
	return l
}

// Builtins are the file tools over the project's Sandbox: read_file,
// list_dir, glob, grep, write_file and edit_file. Every path they take is
// resolved and authorized by the Sandbox, for the tool's own name.
func Builtins(l Limits) []Tool {
	l = l.withDefaults()
	ts := []Tool{readFileTool(l), listDirTool(l), globTool(l), grepTool(l), writeFileTool(), editFileTool(l)}
	for i := range ts {
		ts[i].Timeout = l.Timeout
	}
	return ts
}
