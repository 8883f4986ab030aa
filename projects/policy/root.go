package policy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// Root is a project's root directory, opened once. Every file access of a
// tool goes through it. It is safe for concurrent use; Close it when the
// project closes.
//
// Paths given to its methods are relative to the root, or absolute paths
// inside it (under the real path or under the path it was opened with).
// Symlinks are followed as long as every step stays inside the root; a
// symlink with an absolute target inside the root is followed too (os.Root
// alone refuses every absolute link).
type Root struct {
	root  *os.Root
	real  string // the real absolute path of the root
	given string // the absolute path as the caller named it (may hold symlinks)
}

// OpenRoot opens dir as a project root. dir is resolved to its real path
// first; "/" and a missing, unreadable or non-directory dir are refused.
func OpenRoot(dir string) (*Root, error) {
	if dir == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root is empty; give the project's folder")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %q: %v", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, bus.Errorf(bus.ReasonNotFound, "project root %s does not exist; create it or give an existing folder", abs)
	}
	if err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %s cannot be resolved: %v", abs, err)
	}
	if real == string(filepath.Separator) {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %s is the file system root; give a project folder", abs)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %s: %v", real, err)
	}
	if !fi.IsDir() {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %s is not a directory; give the project's folder", real)
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %s cannot be opened (check its permissions): %v", real, err)
	}
	// Opening needs only search permission on some systems; a root whose
	// entries cannot be listed is useless to every tool, so say so now.
	d, err := r.Open(".")
	if err == nil {
		_, err = d.ReadDir(1)
		d.Close()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		r.Close()
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %s cannot be read (check its permissions): %v", real, err)
	}
	return &Root{root: r, real: real, given: filepath.Clean(abs)}, nil
}

// Path is the root's real absolute path.
func (r *Root) Path() string { return r.real }

// Close releases the root's directory handle.
func (r *Root) Close() error { return r.root.Close() }

// components splits a tool's path into the components to resolve from the
// root. An absolute path must lie under the root by whole components
// (/w/proj-evil is not under /w/proj); it is not cleaned first, so its ".."
// components are resolved like any other, from the root.
func (r *Root) components(path string) ([]string, error) {
	if path == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "path is empty; give a path relative to the project root")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "path %q holds a NUL byte", path)
	}
	p := filepath.ToSlash(path)
	if filepath.IsAbs(path) {
		rel, ok := under(r.real, p)
		if !ok {
			rel, ok = under(r.given, p)
		}
		if !ok {
			return nil, outsideRoot(path, "is an absolute path outside %s", r.real)
		}
		p = rel
	}
	return strings.Split(p, "/"), nil
}

// under returns p relative to base when p is base or below it.
func under(base, p string) (string, bool) {
	base = filepath.ToSlash(base)
	if p == base {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(p, base+"/"); ok {
		return rest, true
	}
	return "", false
}

func (r *Root) String() string { return fmt.Sprintf("root %s", r.real) }
