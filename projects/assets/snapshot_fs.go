package assets

import (
	"io/fs"
	"os"
)

// assetFS is what the loader reads a data dir through: the one file reader
// behind Load, LoadWorkflows and BuildGraph. Names are relative, with '/'.
type assetFS interface {
	// lstat describes name without following a final symlink.
	lstat(name string) (fs.FileInfo, error)
	// open opens name for reading (a folder for listing). It must not
	// block on a FIFO: the opened file is checked to be regular.
	open(name string) (fs.File, error)
}

// rootFS reads through an os.Root: nothing outside the data dir can be
// reached, and a FIFO planted where an asset should be cannot hang the
// open (see openFlags).
type rootFS struct{ r *os.Root }

func (f rootFS) lstat(name string) (fs.FileInfo, error) { return f.r.Lstat(name) }
func (f rootFS) open(name string) (fs.File, error)      { return f.r.OpenFile(name, openFlags, 0) }

// plainFS reads through any fs.FS (tests' fstest.MapFS, an os.Root's FS).
// lstat is fs.Lstat, which is Stat when the FS has no ReadLinkFS.
type plainFS struct{ fsys fs.FS }

func (f plainFS) lstat(name string) (fs.FileInfo, error) { return fs.Lstat(f.fsys, name) }
func (f plainFS) open(name string) (fs.File, error)      { return f.fsys.Open(name) }
