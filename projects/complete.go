package projects

import (
	"path"
	"sort"
	"strings"
)

// MaxCompletions bounds the values one completion offers.
const MaxCompletions = 100

// CompletePath offers the paths of project id that complete prefix, as
// list_dir would show them: the entries of prefix's directory whose name
// starts with the rest, directories with a trailing '/', sorted, at most
// MaxCompletions (more reports whether there were more). Entries the
// policy hides are not offered, and none at all while list_dir is denied
// or asks for a person (listing a folder is what it would do). Names
// starting with '.' are offered once the prefix's last part starts with
// one. Nothing is recorded: a client asks at every keystroke.
func (e *Engine) CompletePath(id, prefix string) (paths []string, more bool, err error) {
	p, err := e.usable(id)
	if err != nil {
		return nil, false, err
	}
	dir, base := path.Split(prefix)
	list := strings.TrimSuffix(dir, "/")
	if list == "" {
		list = "."
	}
	entries, err := p.box().ReadDir("list_dir", list)
	if err != nil {
		return nil, false, nil // nothing to offer: not an error of the client's
	}
	for _, en := range entries {
		name := en.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if en.IsDir() {
			name += "/"
		}
		paths = append(paths, dir+name)
	}
	sort.Strings(paths)
	if len(paths) > MaxCompletions {
		return paths[:MaxCompletions], true, nil
	}
	return paths, false, nil
}
