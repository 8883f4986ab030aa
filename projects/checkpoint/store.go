// Package checkpoint keeps the content files had before a conversation's
// tools changed them, so that conv rewind can put them back.
//
// Contents are stored once by their sha256 under Dir/objects; each
// conversation that may restore a content holds a reference to it in its
// index, Dir/convs/<escaped key>.json. A content no conversation refers
// to is removed. The store is bounded: past MaxBytes of contents, the
// conversations whose first checkpoint is oldest are forgotten first.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxBytes bounds a node's checkpoints when Options.MaxBytes is 0.
const DefaultMaxBytes int64 = 256 << 20

// ErrFull is returned by Keep when the content does not fit under the
// cap even with every other conversation's checkpoints forgotten.
var ErrFull = errors.New("checkpoint store full")

// ErrNotKept is returned by Content for a hash whose content is not in
// the store (never kept, or forgotten with its conversations).
var ErrNotKept = errors.New("content not kept")

// Store is a node's checkpoint store. It is safe for concurrent use by
// one process; two processes must not share a Dir.
type Store struct {
	dir string
	max int64
	now func() time.Time

	mu sync.Mutex
}

// Options configure a Store.
type Options struct {
	// MaxBytes bounds the stored contents' total size; 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// Now stamps a conversation's first checkpoint (the eviction order);
	// nil means time.Now.
	Now func() time.Time
}

// index is one conversation's references.
type index struct {
	// First is when the conversation kept its first content: the oldest
	// first is forgotten first when the store is over its cap.
	First  time.Time `json:"first"`
	Hashes []string  `json:"hashes"`
}

// Open opens (creating it) the store in dir.
func Open(dir string, o Options) (*Store, error) {
	for _, d := range []string{filepath.Join(dir, "objects"), filepath.Join(dir, "convs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("checkpoints: %w", err)
		}
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{dir: dir, max: o.MaxBytes, now: o.Now}, nil
}

// Hash is the name of content in the store and in the log:
// "sha256:<hex>".
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Keep stores content for conversation conv and returns its hash. When
// the store would go over its cap, the conversations (other than conv)
// whose first checkpoint is oldest are forgotten until it fits; if it
// cannot fit, nothing is stored and the error is ErrFull.
func (s *Store) Keep(conv string, content []byte) (string, error) {
	h := Hash(content)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(s.object(h)); err != nil {
		if int64(len(content)) > s.max {
			return "", fmt.Errorf("%w: %d bytes is over the cap of %d", ErrFull, len(content), s.max)
		}
		if err := s.makeRoom(conv, int64(len(content))); err != nil {
			return "", err
		}
		if err := writeAtomic(s.object(h), content); err != nil {
			return "", fmt.Errorf("checkpoints: keep %s: %w", h, err)
		}
	}
	if err := s.ref(conv, h); err != nil {
		return "", err
	}
	return h, nil
}

// Content returns the content of hash h, ErrNotKept when it is not stored.
func (s *Store) Content(h string) ([]byte, error) {
	if _, err := objectName(h); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(s.object(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", h, ErrNotKept)
	}
	if err == nil && Hash(data) != h {
		return nil, fmt.Errorf("checkpoints: %s is damaged (its content hashes otherwise)", h)
	}
	return data, err
}

// Ref makes conversation conv hold the contents hashes (a fork that
// may rewind past its start). Hashes not stored are skipped.
func (s *Store) Ref(conv string, hashes []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range hashes {
		if _, err := os.Stat(s.object(h)); err != nil {
			continue
		}
		if err := s.ref(conv, h); err != nil {
			return err
		}
	}
	return nil
}

// Forget drops conversation conv's references and removes the contents
// no other conversation holds.
func (s *Store) Forget(conv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Remove(s.indexPath(conv)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoints: forget %s: %w", conv, err)
	}
	return s.collect()
}

// Size is the stored contents' total size in bytes.
func (s *Store) Size() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size()
}

func (s *Store) object(h string) string {
	name, _ := objectName(h)
	return filepath.Join(s.dir, "objects", name)
}

func objectName(h string) (string, error) {
	hexs, ok := strings.CutPrefix(h, "sha256:")
	if b, err := hex.DecodeString(hexs); !ok || err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("checkpoints: %q is not a sha256:<hex> hash", h)
	}
	return hexs, nil
}

func (s *Store) indexPath(conv string) string {
	return filepath.Join(s.dir, "convs", url.PathEscape(conv)+".json")
}

func (s *Store) readIndex(conv string) (index, error) {
	var ix index
	data, err := os.ReadFile(s.indexPath(conv))
	if errors.Is(err, fs.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return ix, err
	}
	return ix, json.Unmarshal(data, &ix)
}

func (s *Store) ref(conv, h string) error {
	ix, err := s.readIndex(conv)
	if err != nil {
		return fmt.Errorf("checkpoints: index of %s: %w", conv, err)
	}
	if slices.Contains(ix.Hashes, h) {
		return nil
	}
	if ix.First.IsZero() {
		ix.First = s.now().UTC()
	}
	ix.Hashes = append(ix.Hashes, h)
	data, _ := json.Marshal(ix)
	if err := writeAtomic(s.indexPath(conv), data); err != nil {
		return fmt.Errorf("checkpoints: index of %s: %w", conv, err)
	}
	return nil
}

// indexes reads every conversation's index, by its key.
func (s *Store) indexes() (map[string]index, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "convs"))
	if err != nil {
		return nil, err
	}
	out := make(map[string]index, len(ents))
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		conv, err := url.PathUnescape(name)
		if err != nil {
			continue
		}
		if out[conv], err = s.readIndex(conv); err != nil {
			return nil, fmt.Errorf("checkpoints: index of %s: %w", conv, err)
		}
	}
	return out, nil
}

func (s *Store) size() (int64, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "objects"))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n, nil
}

// makeRoom forgets the oldest conversations other than keep until need
// more bytes fit under the cap.
func (s *Store) makeRoom(keep string, need int64) error {
	for {
		size, err := s.size()
		if err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		if size+need <= s.max {
			return nil
		}
		ixs, err := s.indexes()
		if err != nil {
			return err
		}
		oldest, first := "", time.Time{}
		for conv, ix := range ixs {
			if conv == keep {
				continue
			}
			if oldest == "" || ix.First.Before(first) || ix.First.Equal(first) && conv < oldest {
				oldest, first = conv, ix.First
			}
		}
		if oldest == "" {
			return fmt.Errorf("%w: %d bytes stored, %d more would pass the cap of %d", ErrFull, size, need, s.max)
		}
		if err := os.Remove(s.indexPath(oldest)); err != nil {
			return fmt.Errorf("checkpoints: forget %s: %w", oldest, err)
		}
		if err := s.collect(); err != nil {
			return err
		}
	}
}

// collect removes the contents no conversation holds.
func (s *Store) collect() error {
	ixs, err := s.indexes()
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, ix := range ixs {
		for _, h := range ix.Hashes {
			if name, err := objectName(h); err == nil {
				held[name] = true
			}
		}
	}
	ents, err := os.ReadDir(filepath.Join(s.dir, "objects"))
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	for _, e := range ents {
		if !held[e.Name()] {
			if err := os.Remove(filepath.Join(s.dir, "objects", e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("checkpoints: remove %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// writeAtomic writes data to path through a temporary file and a rename,
// so a crash leaves the old file or the new one, never half of one.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
