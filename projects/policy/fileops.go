package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/jido-bus/jido-bus/bus"
)

// check authorizes an operation on a resolved path; nil allows everything
// (a bare Root, used by the node itself rather than by a tool).
type check func(rel string) error

func (c check) ok(rel string) error {
	if c == nil {
		return nil
	}
	return c(rel)
}

// createRetries bounds the retries of a create that lost a race with
// another creator of the same name.
const createRetries = 3

// Resolve returns path resolved inside the root: clean, relative,
// '/'-separated, every symlink followed. Components that do not exist yet
// are kept as named (but a ".." after a missing one is not found).
func (r *Root) Resolve(path string) (string, error) {
	res, err := r.resolve(path, resolveMode{followLast: true, missingLast: true, missingRest: true})
	if err != nil {
		return "", err
	}
	defer res.close()
	return res.rel, nil
}

// ReadFile returns the content of the regular file at path, refused with
// too_large when it holds more than max bytes, and denied when it has
// other hard links (see linked).
func (r *Root) ReadFile(path string, max int64) ([]byte, error) {
	return r.readFile(path, max, nil, false)
}

func (r *Root) readFile(path string, max int64, may check, hardLinks bool) ([]byte, error) {
	res, err := r.resolve(path, resolveMode{followLast: true})
	if err != nil {
		return nil, err
	}
	defer res.close()
	if err := may.ok(res.rel); err != nil {
		return nil, err
	}
	if !res.info.Mode().IsRegular() {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "%s is not a regular file (%s)", res.rel, res.info.Mode().Type())
	}
	// O_NONBLOCK: should the file become a FIFO before the open, the open
	// must not hang; the identity check below then refuses it.
	f, err := res.dir.OpenFile(res.name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", res.rel, rootErr(path, err))
	}
	defer f.Close()
	if err := same(f, res, path); err != nil {
		return nil, err
	}
	if !hardLinks {
		if err := linked(f, res.rel, "read", "; or, if the project's policy should allow reading such files, set paths.read_hard_links: true"); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", res.rel, err)
	}
	if int64(len(data)) > max {
		return nil, bus.Errorf(bus.ReasonTooLarge, "%s is larger than %d bytes; read a range of it", res.rel, max)
	}
	return data, nil
}

// same refuses an open file that is not the file the walk looked at: the
// name was swapped (for a symlink, another file) between the look and the
// open.
func same(f *os.File, res *resolved, path string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", res.rel, err)
	}
	if !os.SameFile(st, res.info) {
		return changed(path, res.rel)
	}
	return nil
}

// linked refuses the open file f when it has more than one hard link. A
// hard link is another name of the same file, and nothing says where that
// name is: one made to a file outside the root (before the project was
// opened: commands cannot make one, the file tools neither) would be read
// or overwritten through the root. The check is on the file actually
// opened (fstat), never on a name looked up before.
func linked(f *os.File, rel, op, allow string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	n := nlink(fi)
	if n <= 1 || !fi.Mode().IsRegular() {
		return nil
	}
	return denied("%s has %d hard links: other names for the same file, which may lie outside the project, so tools do not %s it; "+
		"to work on it, remove the other links, or make a copy of its own (cp, then mv over it)%s", rel, n, op, allow)
}

// WriteFile writes data to the file at path, creating it (with perm) and
// its missing parent directories, or truncating it. A symlink is followed
// only while it stays inside the root, and a dangling one is never used to
// create a file elsewhere; a file with other hard links is never written
// (see linked).
func (r *Root) WriteFile(path string, data []byte, perm fs.FileMode) error {
	return r.writeFile(path, data, perm, nil)
}

func (r *Root) writeFile(path string, data []byte, perm fs.FileMode, may check) error {
	for attempt := 0; ; attempt++ {
		err := r.writeOnce(path, data, perm, may)
		if !errors.Is(err, fs.ErrExist) || attempt == createRetries {
			return err
		}
	}
}

func (r *Root) writeOnce(path string, data []byte, perm fs.FileMode, may check) error {
	res, err := r.resolve(path, resolveMode{followLast: true, missingLast: true, createDirs: true, mayCreateDir: may})
	if err != nil {
		return err
	}
	defer res.close()
	if err := may.ok(res.rel); err != nil {
		return err
	}
	var f *os.File
	if res.info == nil {
		// O_EXCL: never follows a symlink planted since the walk, and
		// fails (to be retried) if anything took the name.
		f, err = res.dir.OpenFile(res.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return fmt.Errorf("create %s: %w", res.rel, rootErr(path, err))
		}
	} else {
		if !res.info.Mode().IsRegular() {
			return bus.Errorf(bus.ReasonInvalidRequest, "%s is not a regular file (%s); refusing to write it", res.rel, res.info.Mode().Type())
		}
		// No O_TRUNC: the file is truncated only once it is known to be
		// the one the rules were checked on.
		f, err = res.dir.OpenFile(res.name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("write %s: %w", res.rel, rootErr(path, err))
		}
		if err := same(f, res, path); err != nil {
			f.Close()
			return err
		}
		if err := linked(f, res.rel, "write", ""); err != nil {
			f.Close()
			return err
		}
		if err := f.Truncate(0); err != nil {
			f.Close()
			return fmt.Errorf("truncate %s: %w", res.rel, err)
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", res.rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", res.rel, err)
	}
	return nil
}

// MkdirAll creates the directory at path and its missing parents.
func (r *Root) MkdirAll(path string) error { return r.mkdirAll(path, nil) }

func (r *Root) mkdirAll(path string, may check) error {
	res, err := r.resolve(path, resolveMode{followLast: true, missingLast: true, createDirs: true, mayCreateDir: may})
	if err != nil {
		return err
	}
	defer res.close()
	if err := may.ok(res.rel); err != nil {
		return err
	}
	if res.info != nil {
		if !res.info.IsDir() {
			return bus.Errorf(bus.ReasonInvalidRequest, "%s exists and is not a directory", res.rel)
		}
		return nil
	}
	if err := res.dir.Mkdir(res.name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("mkdir %s: %w", res.rel, rootErr(path, err))
	}
	return nil
}

// Remove removes the file, empty directory or symlink at path. A symlink as
// the last component is removed itself, never its target; one in the middle
// is followed like anywhere else.
func (r *Root) Remove(path string) error { return r.remove(path, nil) }

func (r *Root) remove(path string, may check) error {
	res, err := r.resolve(path, resolveMode{})
	if err != nil {
		return err
	}
	defer res.close()
	if res.name == "." {
		return bus.Errorf(bus.ReasonInvalidRequest, "path %q names the directory %s itself; remove it from its parent", path, res.rel)
	}
	if err := may.ok(res.rel); err != nil {
		return err
	}
	// The parent is held open and checked, so the entry removed is rel's
	// whatever happens to the names above it.
	if err := res.dir.Remove(res.name); err != nil {
		return fmt.Errorf("remove %s: %w", res.rel, rootErr(path, err))
	}
	return nil
}

// Stat describes the file at path, following symlinks inside the root.
func (r *Root) Stat(path string) (fs.FileInfo, error) { return r.stat(path, true, nil) }

// Lstat describes the file at path; a symlink as the last component is
// described itself.
func (r *Root) Lstat(path string) (fs.FileInfo, error) { return r.stat(path, false, nil) }

func (r *Root) stat(path string, follow bool, may check) (fs.FileInfo, error) {
	res, err := r.resolve(path, resolveMode{followLast: follow})
	if err != nil {
		return nil, err
	}
	defer res.close()
	if err := may.ok(res.rel); err != nil {
		return nil, err
	}
	return res.info, nil
}

// ReadDir lists the directory at path, sorted by name. Entries are not
// followed: a symlink is listed as a symlink.
func (r *Root) ReadDir(path string) ([]fs.DirEntry, error) { return r.readDir(path, nil, nil) }

func (r *Root) readDir(path string, may, mayEntry check) ([]fs.DirEntry, error) {
	res, err := r.resolve(path, resolveMode{followLast: true})
	if err != nil {
		return nil, err
	}
	defer res.close()
	if err := may.ok(res.rel); err != nil {
		return nil, err
	}
	if !res.info.IsDir() {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "%s is not a directory", res.rel)
	}
	d, err := res.dir.Open(res.name)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", res.rel, rootErr(path, err))
	}
	defer d.Close()
	if err := same(d, res, path); err != nil {
		return nil, err
	}
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", res.rel, err)
	}
	if mayEntry != nil {
		entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return mayEntry(join(res.rel, e.Name())) != nil })
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
