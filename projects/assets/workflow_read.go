package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// maxWorkflowBytes and maxNoteBytes cap one asset file. Workflows and notes
// are prose for people and models; a file past the cap is a mistake (or an
// attack on the node's memory), refused with a diagnostic before it is read.
const (
	maxWorkflowBytes = 1 << 20
	maxNoteBytes     = 1 << 20
)

// readAsset reads one regular file of at most limit bytes from fsys and
// returns its bytes and Source. A symbolic link, a directory or a larger
// file is refused: assets are plain files inside the data directory. The
// limit is enforced while reading too, so a file that grows after the stat
// cannot get past it.
func readAsset(fsys fs.FS, name string, limit int64) ([]byte, Source, error) {
	info, err := fs.Lstat(fsys, name)
	if err != nil {
		return nil, Source{}, fmt.Errorf("cannot read: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, Source{}, fmt.Errorf("not a regular file (%s); asset files must be plain files", info.Mode().Type())
	}
	if info.Size() > limit {
		return nil, Source{}, fmt.Errorf("file is larger than %d bytes (%d); split it", limit, info.Size())
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, Source{}, fmt.Errorf("cannot read: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, Source{}, fmt.Errorf("cannot read: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, Source{}, fmt.Errorf("file is larger than %d bytes; split it", limit)
	}
	sum := sha256.Sum256(data)
	return data, Source{File: name, Hash: hex.EncodeToString(sum[:]), LoadedAt: time.Now().UTC()}, nil
}
