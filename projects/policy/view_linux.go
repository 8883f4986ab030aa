//go:build linux

package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The command's view of the file system. In its own mount namespace the
// helper builds a new root on a small tmpfs and pivots into it, so that
// what a command may read is what exists for it: SystemReads and the
// operator's paths read-only, the program, its project root writable, a
// size-limited tmpfs as /tmp, a few devices and a /proc of its own PID
// namespace. Everything else of the machine (other projects, the node's
// data dir, /root, /home, /run with its sockets) is not hidden from it but
// absent: it cannot read, list, stat or connect to it, whatever Landlock
// can or cannot refuse on this kernel. Paths of Host.Hide that the
// allow-list would show are then covered with an empty read-only tmpfs
// (a folder) or /dev/null (a file).
//
// Mount targets are opened with RESOLVE_IN_ROOT below the new root and
// mounted through their /proc/self/fd link, so a link met on the way (one
// a project planted, or a host link inside a bound folder) is followed
// inside the view and never leads a mount outside it.

type mountKind int

const (
	mountBindRO mountKind = iota // a host folder or file, read-only
	mountBindRW                  // the project root
	mountDevice                  // a host device file
	mountLink                    // a symlink to a path the view shows
	mountTemp                    // the private /tmp: a tmpfs of Limits.TempSize
	mountProc                    // a /proc of the command's PID namespace
)

// viewEntry is one thing of the view: what is at path.
type viewEntry struct {
	path string // where the command sees it
	src  string // the host path bound there, or the link's target
	kind mountKind
	dir  bool // a folder (else a file) is bound
}

// viewSkeleton is the tmpfs the view is built on: folders, empty mount
// points and links only, read-only once built.
const viewSkeleton = "mode=0755,size=1m,nr_inodes=4096"

// viewEntries plans spec's view, in mount order: a folder before what is
// mounted inside it, and at one path the temp dir and /proc after a bind
// (so they win).
func viewEntries(spec *CommandSpec) ([]viewEntry, error) {
	if spec.Root == commandTemp {
		return nil, denied("run_command cannot run in a project whose root is %s: that is where each command gets its private temp dir; open the project from a folder below it", commandTemp)
	}
	type found struct {
		path, real string
		dir        bool
	}
	var reads []found
	for _, p := range dedupe(readable(specOutsideView(spec))) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // not on this machine
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		reads = append(reads, found{p, real, fi.IsDir()})
	}
	// Paths that are what they say are bound where they are, unless a
	// bound folder holds them already.
	var entries []viewEntry
	for _, r := range reads {
		if r.path == r.real {
			entries = append(entries, viewEntry{path: r.path, src: r.real, kind: mountBindRO, dir: r.dir})
		}
	}
	var folders []string
	for _, e := range entries {
		if e.dir {
			folders = append(folders, e.path)
		}
	}
	entries = slices.DeleteFunc(entries, func(e viewEntry) bool {
		return slices.ContainsFunc(folders, func(f string) bool { return f != e.path && isUnder(f, e.path) })
	})
	shown := func(p string) bool {
		return isUnder(spec.Root, p) || slices.ContainsFunc(entries, func(o viewEntry) bool {
			return o.path == p || o.dir && isUnder(o.path, p)
		})
	}
	// A path through a link (/bin -> usr/bin, /etc/localtime ->
	// /usr/share/zoneinfo/…) is a link where the view shows its target,
	// and the target bound in its place where not (/etc/resolv.conf ->
	// /run/…).
	var links []viewEntry
	for _, r := range reads {
		switch {
		case r.path == r.real, shown(r.path):
			// bound above, or inside a bound folder, where the host's
			// own link is
		case shown(r.real):
			links = append(links, viewEntry{path: r.path, src: r.real, kind: mountLink})
		default:
			links = append(links, viewEntry{path: r.path, src: r.real, kind: mountBindRO, dir: r.dir})
		}
	}
	entries = slices.DeleteFunc(entries, func(e viewEntry) bool { return isUnder(spec.Root, e.path) })
	entries = append(entries, links...)
	entries = append(entries,
		viewEntry{path: spec.Root, src: spec.Root, kind: mountBindRW, dir: true},
		viewEntry{path: commandTemp, kind: mountTemp, dir: true},
		viewEntry{path: "/proc", kind: mountProc, dir: true},
		viewEntry{path: "/dev/fd", src: "/proc/self/fd", kind: mountLink},
		viewEntry{path: "/dev/stdin", src: "/proc/self/fd/0", kind: mountLink},
		viewEntry{path: "/dev/stdout", src: "/proc/self/fd/1", kind: mountLink},
		viewEntry{path: "/dev/stderr", src: "/proc/self/fd/2", kind: mountLink},
		viewEntry{path: "/dev/shm", src: commandTemp, kind: mountLink},
	)
	for _, d := range devices {
		entries = append(entries, viewEntry{path: d.name, src: d.name, kind: mountDevice})
	}
	slices.SortStableFunc(entries, func(a, b viewEntry) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return int(a.kind) - int(b.kind)
	})
	return entries, nil
}

// specOutsideView is spec as seen before the view exists: /proc is not
// one of the paths to bind (the view gets its own).
func specOutsideView(spec *CommandSpec) *CommandSpec {
	s := *spec
	s.Namespaces = false
	return &s
}

func dedupe(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if filepath.IsAbs(p) && p != "/" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// buildView runs in the helper, in its new user, mount and PID
// namespaces, before anything of the command: it builds spec's view on
// spec.TempDir and makes it the root, then protects spec.Protect, covers
// spec.Hide and makes the skeleton read-only. The helper's working
// directory is then / of the view.
func buildView(spec *CommandSpec) error {
	entries, err := viewEntries(spec)
	if err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the command's mounts private: %w", err)
	}
	if err := unix.Mount("jido-view", spec.TempDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, viewSkeleton); err != nil {
		return fmt.Errorf("mount the command's root: %w", err)
	}
	root, err := unix.Open(spec.TempDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the command's root: %w", err)
	}
	defer unix.Close(root)
	for _, e := range entries {
		if err := e.make(root, spec.Limits); err != nil {
			if e.kind == mountBindRW {
				return fmt.Errorf("the project root %s cannot be given to the command (is it gone?): %w", e.path, err)
			}
			return fmt.Errorf("%s in the command's view: %w", e.path, err)
		}
	}
	// pivot_root(".", ".") stacks the old root on the new one; detaching
	// it leaves the view alone, with nothing of the old tree reachable.
	if err := unix.Fchdir(root); err != nil {
		return fmt.Errorf("enter the command's root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot into the command's root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the node's file system from the command: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := protectEntries(spec); err != nil {
		return err
	}
	if err := hide(spec.Hide); err != nil {
		return err
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the command's root read-only: %w", err)
	}
	return nil
}

// make puts e in the view rooted at root.
func (e viewEntry) make(root int, l Limits) error {
	if e.kind == mountLink {
		dir, err := mkdirAllIn(root, filepath.Dir(e.path))
		if err != nil {
			return err
		}
		defer unix.Close(dir)
		if err := unix.Symlinkat(e.src, dir, filepath.Base(e.path)); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("link to %s: %w", e.src, err)
		}
		return nil
	}
	target, err := targetIn(root, e.path, e.dir || e.kind == mountTemp || e.kind == mountProc)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	at := fdPath(target)
	switch e.kind {
	case mountTemp:
		opts := fmt.Sprintf("mode=1777,size=%d,nr_inodes=%d", int64(l.TempSize), max(1024, int64(l.TempSize)/(16<<10)))
		if err := unix.Mount("jido-tmp", at, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mount the temp dir: %w", err)
		}
		return nil
	case mountProc:
		if err := unix.Mount("proc", at, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount the command's /proc: %w", err)
		}
		return nil
	}
	if err := unix.Mount(e.src, at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", e.src, err)
	}
	attr := uint64(unix.MOUNT_ATTR_NOSUID)
	switch e.kind {
	case mountBindRO:
		attr |= unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV
	case mountBindRW:
		attr |= unix.MOUNT_ATTR_NODEV
	case mountDevice:
		attr |= unix.MOUNT_ATTR_NOEXEC
	}
	return setAttr(root, e.path, attr)
}

// setAttr sets attr on the mount now at path below root, and on the mounts
// inside it.
func setAttr(root int, path string, attr uint64) error {
	fd, err := openIn(root, path, unix.O_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attr}); err != nil {
		return fmt.Errorf("set its mount attributes: %w", err)
	}
	return nil
}

// fdPath is the path through which a mount lands on exactly what fd is.
func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// openIn opens path below root, links resolved as if root were /.
func openIn(root int, path string, flags uint64) (int, error) {
	rel := strings.TrimPrefix(filepath.Clean(path), "/")
	if rel == "" {
		rel = "."
	}
	return unix.Openat2(root, rel, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
}

// mkdirAllIn opens the folder path below root, creating what is missing.
func mkdirAllIn(root int, path string) (int, error) {
	fd, err := openIn(root, path, unix.O_PATH|unix.O_DIRECTORY)
	if err == nil || !errors.Is(err, unix.ENOENT) || path == "/" {
		return fd, err
	}
	parent, err := mkdirAllIn(root, filepath.Dir(path))
	if err != nil {
		return -1, err
	}
	err = unix.Mkdirat(parent, filepath.Base(path), 0o755)
	unix.Close(parent)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("create %s: %w", path, err)
	}
	return openIn(root, path, unix.O_PATH|unix.O_DIRECTORY)
}

// targetIn opens path below root as a mount point, creating it (a folder,
// or an empty file) when missing.
func targetIn(root int, path string, dir bool) (int, error) {
	fd, err := openIn(root, path, unix.O_PATH)
	if err == nil || !errors.Is(err, unix.ENOENT) {
		return fd, err
	}
	if dir {
		return mkdirAllIn(root, path)
	}
	parent, err := mkdirAllIn(root, filepath.Dir(path))
	if err != nil {
		return -1, err
	}
	f, err := unix.Openat(parent, filepath.Base(path), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	unix.Close(parent)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("create %s: %w", path, err)
	}
	if err == nil {
		unix.Close(f)
	}
	return openIn(root, path, unix.O_PATH)
}

// hide covers each path of paths the view shows: a folder with an empty
// read-only tmpfs, a file with /dev/null, read-only. It runs inside the
// view. A path that is a link is left alone: it is not the thing to hide
// (that was recorded by its real path), and where it leads is judged on
// its own.
func hide(paths []string) error {
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			continue // not in the view
		}
		if err != nil {
			return fmt.Errorf("hide %s from the command: %w", p, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		switch {
		case err != nil:
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			err = unix.Mount("jido-hidden", fdPath(fd), "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=2,mode=0555")
		default:
			if err = unix.Mount("/dev/null", fdPath(fd), "", unix.MS_BIND, ""); err == nil {
				err = unix.MountSetattr(unix.AT_FDCWD, p, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOEXEC})
			}
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("hide %s from the command: %w", p, err)
		}
	}
	return nil
}
