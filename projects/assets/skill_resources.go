package assets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// MaxSkillResources bounds the files Resources lists: a skill folder
// holding a whole data set is listed in part, and says so.
const MaxSkillResources = 500

// Dir is the skill's folder, an absolute path (<data dir>/skills/<name>).
// An Agent Skills body names the files beside its SKILL.md relative to it
// (references/api.md, scripts/run.py).
func (s *Skill) Dir() string {
	return filepath.Join(s.dataDir, filepath.FromSlash(path.Dir(s.Source.File)))
}

// Resources lists the files of the skill's folder besides SKILL.md,
// '/'-separated and relative to the folder, sorted; at most
// MaxSkillResources of them (more is true when there were others). The
// folder is read when asked, not at load, as the body is: a skill's
// scripts and references are the skill's own business until it is used.
// Hidden entries and symlinks are left out (a link could lead out of the
// data dir), and folders are walked maxWalkDepth deep.
func (s *Skill) Resources() (files []string, more bool, err error) {
	root, err := os.OpenRoot(s.Dir())
	if err != nil {
		return nil, false, fmt.Errorf("skill %s: open its folder: %w", s.Name, err)
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if hidden(d.Name()) || d.Type()&fs.ModeSymlink != 0 {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if depth(p) >= maxWalkDepth {
				return fs.SkipDir
			}
			return nil
		}
		if p == skillFile || !d.Type().IsRegular() {
			return nil
		}
		if len(files) == MaxSkillResources {
			more = true
			return fs.SkipAll
		}
		files = append(files, p)
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return nil, false, fmt.Errorf("skill %s: list its folder: %w", s.Name, err)
	}
	sort.Strings(files)
	return files, more, nil
}

// depth counts the folders of a '/'-separated relative path.
func depth(p string) int {
	n := 1
	for _, r := range p {
		if r == '/' {
			n++
		}
	}
	return n
}
