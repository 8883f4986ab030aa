package policy

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// WalkDir walks the tree at path like fs.WalkDir: fn gets each entry's
// resolved path relative to the root, a directory before its contents,
// entries in name order, and may return fs.SkipDir or fs.SkipAll. Symlinks
// are reported as entries and never followed, and each directory is entered
// through a handle checked to be the directory that was listed, so the walk
// cannot be steered out of the tree it started in.
func (r *Root) WalkDir(path string, fn fs.WalkDirFunc) error { return r.walkDir(path, fn, nil, nil) }

func (r *Root) walkDir(path string, fn fs.WalkDirFunc, may, mayEntry check) error {
	res, err := r.resolve(path, resolveMode{followLast: true})
	if err != nil {
		return err
	}
	defer res.close()
	if err := may.ok(res.rel); err != nil {
		return err
	}
	de := fs.FileInfoToDirEntry(res.info)
	if !res.info.IsDir() {
		err = fn(res.rel, de, nil)
	} else {
		sub, err2 := res.dir.OpenRoot(res.name)
		if err2 != nil {
			return fmt.Errorf("walk %s: %w", res.rel, rootErr(path, err2))
		}
		defer sub.Close()
		if st, err := sub.Stat("."); err != nil || !os.SameFile(st, res.info) {
			return changed(path, res.rel)
		}
		err = walkIn(sub, res.rel, de, fn, mayEntry)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

func walkIn(dir *os.Root, rel string, de fs.DirEntry, fn fs.WalkDirFunc, mayEntry check) error {
	if err := fn(rel, de, nil); err != nil {
		return err
	}
	d, err := dir.Open(".")
	var entries []fs.DirEntry
	if err == nil {
		entries, err = d.ReadDir(-1)
		d.Close()
	}
	if err != nil {
		if err := fn(rel, de, err); err != nil {
			return err
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		erel := join(rel, e.Name())
		if mayEntry != nil && mayEntry(erel) != nil {
			continue
		}
		if !e.IsDir() {
			if err := fn(erel, e, nil); err != nil {
				if err == fs.SkipDir {
					return nil
				}
				return err
			}
			continue
		}
		sub, err := enter(dir, e.Name(), erel)
		if err != nil {
			if err := fn(erel, e, err); err != nil && err != fs.SkipDir {
				return err
			}
			continue
		}
		err = walkIn(sub, erel, e, fn, mayEntry)
		sub.Close()
		if err != nil && err != fs.SkipDir {
			return err
		}
	}
	return nil
}

// enter opens the subdirectory name of dir, refusing it if it is no longer
// the directory that was listed (replaced by a symlink, for one).
func enter(dir *os.Root, name, rel string) (*os.Root, error) {
	fi, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, changed(rel, rel)
	}
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, rootErr(rel, err)
	}
	if st, err := sub.Stat("."); err != nil || !os.SameFile(st, fi) {
		sub.Close()
		return nil, changed(rel, rel)
	}
	return sub, nil
}
