package projections

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrNotFound: the projection, or a key of it, does not exist.
var ErrNotFound = errors.New("not found")

// ErrLocked: another process (usually a running server) holds the
// projection store.
var ErrLocked = errors.New("projection store is locked by another process")

const layoutVersion = 1

var keyLayout = []byte("Lformat")

// StoreOptions configure a Store. The zero value is a store on the
// operating system's filesystem.
type StoreOptions struct {
	// FS holds the directory. Nil means the operating system's; tests pass
	// vfs.NewMem().
	FS vfs.FS
	// CacheBytes is the size of Pebble's block cache, in bytes. Zero means
	// 32 MiB.
	CacheBytes int64
	// Logger receives Pebble's messages. Nil means slog.Default().
	Logger *slog.Logger
}

// Store is the Pebble database holding projection checkpoints and states
// (see the package documentation for the key layout). It is safe for
// concurrent use; one Runner writes to it.
type Store struct {
	db *pebble.DB
	// failed is the first commit Pebble could not make durable; every
	// later commit fails with it (Pebble cannot go on after a fatal
	// error, and a retried sync may "succeed" without the data).
	failed atomic.Pointer[error]
}

// commit commits b, synced. A commit Pebble cannot make durable is fatal
// to Pebble (pebbleLogger.Fatalf): it fails the store, and this commit
// and every later one return the error, instead of the process exiting.
func (s *Store) commit(b *pebble.Batch) (err error) {
	if f := s.failed.Load(); f != nil {
		return *f
	}
	defer func() {
		if r := recover(); r != nil {
			fp, ok := r.(fatalPanic)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("the projection store can no longer write (%w); restart the node once the disk is usable", fp.err)
			s.failed.CompareAndSwap(nil, &err)
		}
	}()
	return b.Commit(pebble.Sync)
}

// OpenStore opens (creating if needed) the store in dir. A directory held
// by another process fails with an error wrapping ErrLocked.
func OpenStore(dir string, opts StoreOptions) (*Store, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	size := opts.CacheBytes
	if size == 0 {
		size = 32 << 20
	}
	cache := pebble.NewCache(size)
	defer cache.Unref()
	po := &pebble.Options{
		FS: opts.FS, Cache: cache, Logger: pebbleLogger{logger},
		// A rebuild writes about a hundred megabytes of states for a
		// million conversation events. With Pebble's 4 MiB memtables that
		// was fifty flushes, each compacted into every table of the last
		// level (conversation keys spread over the whole key range), which
		// cost as much CPU as the fold. Pebble grows memtables from
		// 256 KiB up to this size, so a quiet store does not pay for it.
		MemTableSize: 64 << 20,
	}
	// A rebuild looks up every new key before folding its first entry;
	// without filters each such miss reads a data block of every level.
	po.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	if po.FS == nil {
		po.FS = vfs.Default
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) || strings.Contains(err.Error(), "lock held by current process") {
			return nil, fmt.Errorf("open projection store %s: %w (%v)", dir, ErrLocked, err)
		}
		return nil, fmt.Errorf("open projection store %s: %w", dir, err)
	}
	s := &Store{db: db}
	v, closer, err := db.Get(keyLayout)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		b := db.NewBatch()
		if err = b.Set(keyLayout, []byte{layoutVersion}, nil); err == nil {
			err = s.commit(b)
		}
		_ = b.Close()
	case err == nil:
		ok := len(v) == 1 && v[0] == layoutVersion
		_ = closer.Close()
		if !ok {
			err = fmt.Errorf("unknown key layout (this build reads layout %d)", layoutVersion)
		}
	}
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open projection store %s: %w", dir, err)
	}
	return s, nil
}

// Close closes the database. The Runner using the store must have stopped.
// A store whose commits failed closes without a fatal end either.
func (s *Store) Close() (err error) {
	defer func() {
		if r := recover(); r != nil {
			fp, ok := r.(fatalPanic)
			if !ok {
				panic(r)
			}
			err = fp.err
		}
	}()
	return s.db.Close()
}

// Checkpoint is what a Store records for a projection: how far it has
// folded the log and with which version.
type Checkpoint struct {
	Version string `json:"version"`
	// Position is the global sequence the stored states include: every
	// entry at or below it has been folded, none above it.
	Position uint64 `json:"position"`
	// Keys is the number of stored states.
	Keys uint64 `json:"keys"`
	// Applied counts the entries folded since the last rebuild.
	Applied uint64 `json:"applied"`
}

func checkpointKey(name string) []byte { return append([]byte{'C'}, name...) }

func stateKey(name, key string) []byte {
	b := make([]byte, 0, 2+len(name)+len(key))
	b = append(b, 'K')
	b = append(b, name...)
	b = append(b, 0)
	return append(b, key...)
}

// stateBounds are the bounds of every state key of projection name.
func stateBounds(name string) (lo, hi []byte) {
	lo = stateKey(name, "")
	hi = append([]byte{'K'}, name...)
	return lo, append(hi, 1)
}

// reader is what both *pebble.DB and *pebble.Snapshot offer.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

func getCopy(r reader, key []byte) ([]byte, error) {
	v, closer, err := r.Get(key)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

func readCheckpoint(r reader, name string) (Checkpoint, bool, error) {
	b, err := getCopy(r, checkpointKey(name))
	if errors.Is(err, pebble.ErrNotFound) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, err
	}
	var cp Checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint of projection %s is damaged: %w", name, err)
	}
	return cp, true, nil
}

// Checkpoint returns the stored checkpoint of projection name; false when
// there is none.
func (s *Store) Checkpoint(name string) (Checkpoint, bool, error) {
	return readCheckpoint(s.db, name)
}

// State returns the stored state of key in projection name and the
// checkpoint it belongs to, read from one consistent snapshot. A key with
// no state is an error wrapping ErrNotFound.
func (s *Store) State(name, key string) ([]byte, Checkpoint, error) {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	cp, ok, err := readCheckpoint(snap, name)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	if !ok {
		return nil, Checkpoint{}, fmt.Errorf("projection %s has no checkpoint: %w", name, ErrNotFound)
	}
	b, err := getCopy(snap, stateKey(name, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, cp, fmt.Errorf("projection %s has no state for key %q: %w", name, key, ErrNotFound)
	}
	return b, cp, err
}

// Keys lists up to limit keys of projection name that start with prefix,
// after the key after (exclusive; "" to start at the beginning), in byte
// order. limit ≤ 0 means no limit.
func (s *Store) Keys(name, prefix, after string, limit int) ([]string, error) {
	lo, hi := stateBounds(name)
	if prefix != "" {
		lo = stateKey(name, prefix)
	}
	if after != "" && after >= prefix {
		lo = append(stateKey(name, after), 0)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	skip := len(name) + 2
	var keys []string
	for it.First(); it.Valid(); it.Next() {
		k := string(it.Key()[skip:])
		if !strings.HasPrefix(k, prefix) {
			break
		}
		keys = append(keys, k)
		if limit > 0 && len(keys) == limit {
			break
		}
	}
	return keys, it.Error()
}
