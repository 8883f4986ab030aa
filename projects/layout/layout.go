// Package layout names the folders a project keeps under its root:
// <root>/<data dir>/{skills,commands,workflows,skill_graph,state}, with
// ".jido" as the default data dir name. It is pure path arithmetic plus
// one function that creates what is missing; it never removes anything.
package layout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDataDir is the data dir name used when none is configured.
const DefaultDataDir = ".jido"

// ErrBadDataDir is wrapped by every refusal of a data dir name.
var ErrBadDataDir = errors.New("bad data dir name")

// Layout is the set of paths of one project. All paths are root joined
// with clean, relative parts, so every one of them lies inside Root.
type Layout struct {
	Root       string // the project root, as given (callers resolve it first)
	DataDir    string // <root>/<data dir>
	Skills     string // <data dir>/skills
	Commands   string // <data dir>/commands
	Workflows  string // <data dir>/workflows
	SkillGraph string // <data dir>/skill_graph
	State      string // <data dir>/state
}

// New returns the layout of root with the data dir name dataDir ("" means
// DefaultDataDir). A name that is absolute, contains a path separator or
// is "." or ".." is refused with ErrBadDataDir: the data dir is one folder
// directly under the root, never elsewhere.
func New(root, dataDir string) (Layout, error) {
	if dataDir == "" {
		dataDir = DefaultDataDir
	}
	if err := ValidateDataDir(dataDir); err != nil {
		return Layout{}, err
	}
	d := filepath.Join(root, dataDir)
	return Layout{
		Root:       root,
		DataDir:    d,
		Skills:     filepath.Join(d, "skills"),
		Commands:   filepath.Join(d, "commands"),
		Workflows:  filepath.Join(d, "workflows"),
		SkillGraph: filepath.Join(d, "skill_graph"),
		State:      filepath.Join(d, "state"),
	}, nil
}

// ValidateDataDir reports whether name may be a data dir name (see New).
// The empty name is refused here: New maps it to the default before.
func ValidateDataDir(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty; use a folder name such as %q", ErrBadDataDir, DefaultDataDir)
	case filepath.IsAbs(name) || strings.HasPrefix(name, "/"):
		return fmt.Errorf("%w %q: absolute; it must be one folder name under the project root, such as %q", ErrBadDataDir, name, DefaultDataDir)
	case strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, filepath.Separator):
		return fmt.Errorf("%w %q: contains a path separator; it must be one folder name under the project root, such as %q", ErrBadDataDir, name, DefaultDataDir)
	case name == "." || name == ".." || strings.Contains(name, ".."):
		return fmt.Errorf("%w %q: contains \"..\" or is \".\"; it must be one folder name under the project root, such as %q", ErrBadDataDir, name, DefaultDataDir)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("%w %q: contains a NUL byte", ErrBadDataDir, name)
	}
	return nil
}

// Dirs lists the folders Ensure creates, parents first.
func (l Layout) Dirs() []string {
	return []string{l.DataDir, l.Skills, l.Commands, l.Workflows, l.SkillGraph, l.State}
}

// Ensure creates the folders of l that are missing, with mode 0o755
// (before the umask). It returns the ones it created. An existing path that
// is not a folder (a file, or a symlink: the data dir must be a real
// folder inside the root so a link cannot move the assets elsewhere) is an
// error naming it; the root itself must exist already.
func (l Layout) Ensure() (created []string, err error) {
	if fi, err := os.Stat(l.Root); err != nil {
		return nil, fmt.Errorf("project root %s: %w", l.Root, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("project root %s is not a folder", l.Root)
	}
	for _, d := range l.Dirs() {
		fi, err := os.Lstat(d)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return created, fmt.Errorf("%s is a symlink; the project's data folders must be real folders inside the root: replace it with a folder", d)
		case err == nil:
			return created, fmt.Errorf("%s exists and is not a folder: move it away so the project's data folder can be created", d)
		case !errors.Is(err, os.ErrNotExist):
			return created, fmt.Errorf("check %s: %w", d, err)
		}
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return created, fmt.Errorf("create %s: %w", d, err)
		}
		created = append(created, d)
	}
	return created, nil
}
