//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
)

// A protected entry (.jido, .git) that does not exist when a command starts
// cannot be mounted over, so the command may create it. That is allowed —
// refusing would need a placeholder planted in the user's folder — but it
// is never silent: Exec names what the command created in the result's
// Warning, so the caller looks at it before git (or jido-bus) trusts it.
// Later commands find it and cannot change it.

// missingEntries are the names of protect that do not exist under root.
func missingEntries(root string, protect []string) []string {
	var missing []string
	for _, name := range protect {
		if _, err := os.Lstat(filepath.Join(root, name)); os.IsNotExist(err) {
			missing = append(missing, name)
		}
	}
	return missing
}

// createdWarning says which of the missing entries exist now.
func createdWarning(root string, missing []string) string {
	var made []string
	for _, name := range missing {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			made = append(made, name)
		}
	}
	if len(made) == 0 {
		return ""
	}
	return "the command created " + strings.Join(made, " and ") + ", which did not exist when it started and so was not protected; " +
		"check what it holds (hooks, config) before running git or trusting it: from now on commands cannot change it"
}

func joinWarnings(ws ...string) string {
	var out []string
	for _, w := range ws {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, "; ")
}
