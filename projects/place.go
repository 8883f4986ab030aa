package projects

import (
	"os"
	"path/filepath"
	"strings"
)

// place is where a folder is on disk, whatever path reached it, so that
// two roots can be compared for being one folder or one inside the other
// when their paths tell nothing: a symlink (resolved before), a bind
// mount, the same folder spelled in another case on a case-insensitive
// file system.
//
// chain is the folder and each of its ancestors up to "/", as os.Stat saw
// them (os.SameFile compares device and inode); it catches the same folder
// under any path, and a folder inside another as long as the path of the
// inner one passes through the outer one. fs is the folder's path within
// its file system (on Linux, from /proc/self/mountinfo): it also catches a
// bind mount of a folder inside another, whose own path passes through
// nothing of the outer one. fs is zero where the system does not say.
type place struct {
	path  string
	chain []os.FileInfo
	fs    fsPath
}

// fsPath is a folder's path inside the file system that holds it (dev
// names it, "major:minor"); "" when unknown.
type fsPath struct{ dev, path string }

// placeOf stats real (a real path: no symlinks) and its ancestors. An
// ancestor that cannot be stat'ed ends the chain there.
func placeOf(real string) (place, error) {
	fi, err := os.Stat(real)
	if err != nil {
		return place{}, err
	}
	pl := place{path: real, chain: []os.FileInfo{fi}, fs: fsPathOf(real)}
	for dir := real; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
		fi, err := os.Stat(dir)
		if err != nil {
			break
		}
		pl.chain = append(pl.chain, fi)
	}
	return pl, nil
}

// relation is how one folder stands to another.
type relation int

const (
	unrelated relation = iota
	sameFolder
	inside // the first lies below the second
	holds  // the second lies below the first
)

// relate says how a stands to b. A place known by its path alone (a
// folder that did not exist when it was looked at) compares by path.
func relate(a, b place) relation {
	switch {
	case a.path == "" || b.path == "":
		return unrelated
	case a.path == b.path, len(a.chain) > 0 && len(b.chain) > 0 && os.SameFile(a.chain[0], b.chain[0]),
		a.fs.path != "" && a.fs == b.fs:
		return sameFolder
	case below(a, b):
		return inside
	case below(b, a):
		return holds
	}
	return unrelated
}

// below reports whether a lies strictly below b.
func below(a, b place) bool {
	if within(b.path, a.path) {
		return true
	}
	if len(b.chain) > 0 {
		for _, anc := range a.chain[min(1, len(a.chain)):] {
			if os.SameFile(anc, b.chain[0]) {
				return true
			}
		}
	}
	return a.fs.path != "" && b.fs.path != "" && a.fs.dev == b.fs.dev && within(b.fs.path, a.fs.path)
}

// within reports whether p lies strictly below dir (both clean paths).
func within(dir, p string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// realPlace is the place of dir, resolved to its real path first; a dir
// that does not exist (yet) is known by its absolute path alone.
func realPlace(dir string) (place, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return place{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	pl, err := placeOf(abs)
	if err != nil {
		return place{path: abs}, nil
	}
	return pl, nil
}
