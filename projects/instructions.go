package projects

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// InstructionsFile is the project's own instructions for its model, under
// its data dir (".jido/instructions.md"), beside AGENTS.md at its root.
const InstructionsFile = "instructions.md"

// AgentsFile is the instructions file coding agents share (agents.md):
// a project that has one for other tools has told jido-bus's model too.
const AgentsFile = "AGENTS.md"

// MaxInstructionsBytes bounds each instructions file: they go with every
// LLM call.
const MaxInstructionsBytes = 64 << 10

// instructions reads a project's instructions for its model: AGENTS.md at
// its root, then <data dir>/instructions.md, each when it exists, through
// the project's root (a link out of it is refused like a tool's). It
// returns their texts joined and the files they came from.
func instructions(root *policy.Root, dataDir string) (string, []string, error) {
	var texts, files []string
	for _, name := range []string{AgentsFile, path.Join(dataDir, InstructionsFile)} {
		data, err := root.ReadFile(name, MaxInstructionsBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if bus.ErrorType(err) == bus.ReasonTooLarge {
			return "", nil, bus.Errorf(bus.ReasonInvalidRequest, "the project's instructions %s are over %d bytes, and they go with every call to its model: shorten them", name, MaxInstructionsBytes)
		}
		if err != nil {
			return "", nil, bus.Errorf(bus.ReasonInvalidRequest, "the project's instructions %s: %s", name, bus.AsError(err).Message)
		}
		if t := strings.TrimSpace(string(data)); t != "" {
			texts = append(texts, t)
			files = append(files, name)
		}
	}
	if len(texts) == 0 {
		return "", nil, nil
	}
	return strings.Join(texts, "\n\n"), files, nil
}
