package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// maxLinks bounds the symlinks followed while resolving one path, like the
// kernel's ELOOP limit.
const maxLinks = 40

// resolveMode says how the last component and missing directories are
// treated.
type resolveMode struct {
	followLast   bool                   // a symlink as the last component is followed (Stat) or kept (Lstat, Remove)
	missingLast  bool                   // the last component may be missing (create)
	missingRest  bool                   // any component may be missing: the rest is appended as named (Resolve only)
	createDirs   bool                   // missing directories on the way are created (MkdirAll, WriteFile)
	mayCreateDir func(rel string) error // asked before a missing directory is created
}

// resolved is a path walked from the root: the last component's parent
// directory held open, the last component's name in it and the resolved
// path relative to the root. Every directory handle in dirs was checked to
// be the directory that was looked at (same inode), so dir is really rel's
// parent even if the tree changed during the walk.
type resolved struct {
	dirs []*os.Root  // dirs[0] is the root (not owned), then one per component of the parent
	dir  *os.Root    // the parent directory of the last component
	name string      // the last component in dir ("." when rel names dir itself)
	rel  string      // the resolved path, '/'-separated, "." for the root
	info fs.FileInfo // Lstat of the last component, nil when it is missing
}

func (res *resolved) close() {
	for _, d := range res.dirs[1:] {
		d.Close()
	}
}

// changed is the refusal for a tree that changed under a walk: a component
// checked as a directory was something else when opened.
func changed(path, rel string) error {
	return outsideRoot(path, "changed while it was being resolved (%s was replaced, perhaps by a symlink); refused, retry if the change was yours", rel)
}

// resolve walks path from the root component by component, following
// symlinks only while they stay inside the root. A ".." after a symlink goes
// to the parent of the link's target (POSIX semantics), and a ".." above the
// root is an escape.
func (r *Root) resolve(path string, mode resolveMode) (_ *resolved, err error) {
	todo, err := r.components(path)
	if err != nil {
		return nil, err
	}
	var stack []string
	dirs := []*os.Root{r.root}
	defer func() {
		if err != nil {
			for _, d := range dirs[1:] {
				d.Close()
			}
		}
	}()
	pop := func() {
		stack = stack[:len(stack)-1]
		dirs[len(dirs)-1].Close()
		dirs = dirs[:len(dirs)-1]
	}
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return nil, outsideRoot(path, "climbs above the root with ..")
			}
			pop()
			continue
		}
		last := onlyDots(todo)
		cur := dirs[len(dirs)-1]
		rel := strings.Join(append(stack[:len(stack):len(stack)], c), "/")
		fi, err := cur.Lstat(c)
		if errors.Is(err, fs.ErrNotExist) {
			switch {
			case last && mode.missingLast:
				return &resolved{dirs: dirs, dir: cur, name: c, rel: rel}, nil
			case mode.missingRest && !slices.Contains(todo, ".."):
				for _, c := range todo {
					if c != "" && c != "." {
						rel += "/" + c
					}
				}
				return &resolved{dirs: dirs, dir: cur, rel: rel}, nil
			case !last && mode.createDirs:
				if mode.mayCreateDir != nil {
					if err := mode.mayCreateDir(rel); err != nil {
						return nil, err
					}
				}
				if err := cur.Mkdir(c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
					return nil, fmt.Errorf("create directory %s: %w", rel, rootErr(path, err))
				}
				fi, err = cur.Lstat(c)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, rootErr(path, err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 && (!last || mode.followLast) {
			if links++; links > maxLinks {
				return nil, bus.Errorf(bus.ReasonInvalidRequest, "path %q: more than %d symlinks (a loop?)", path, maxLinks)
			}
			target, err := cur.Readlink(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rel, rootErr(path, err))
			}
			if filepath.IsAbs(target) {
				inside, ok := under(r.real, filepath.ToSlash(target))
				if !ok {
					return nil, outsideRoot(path, "goes through symlink %s, which points outside the root to %s", rel, target)
				}
				for len(stack) > 0 {
					pop()
				}
				target = inside
			}
			todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
			continue
		}
		if last {
			return &resolved{dirs: dirs, dir: cur, name: c, rel: rel, info: fi}, nil
		}
		if !fi.IsDir() {
			return nil, bus.Errorf(bus.ReasonInvalidRequest, "path %q: %s is not a directory", path, rel)
		}
		sub, err := cur.OpenRoot(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, rootErr(path, err))
		}
		if st, err := sub.Stat("."); err != nil || !os.SameFile(fi, st) {
			sub.Close()
			return nil, changed(path, rel)
		}
		stack = append(stack, c)
		dirs = append(dirs, sub)
	}
	// The path names a directory already on the stack (".", "a/..", "a/").
	d := dirs[len(dirs)-1]
	fi, err := d.Stat(".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rel := strings.Join(stack, "/")
	if rel == "" {
		rel = "."
	}
	return &resolved{dirs: dirs, dir: d, name: ".", rel: rel, info: fi}, nil
}

func onlyDots(cs []string) bool {
	for _, c := range cs {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

// rootErr turns os.Root's escape error (unexported, so known by its text)
// into outside_root; it only shows when the tree changed under a walk, since
// resolve never hands os.Root a path that escapes.
func rootErr(path string, err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return outsideRoot(path, "escapes the root (%v)", err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (%w)", bus.Errorf(bus.ReasonNotFound, "path %q does not exist", path), err)
	}
	return err
}
