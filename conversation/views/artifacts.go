package views

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// DefaultArtifactThreshold is the size above which a tool output is stored
// as an artifact: 64 KiB.
const DefaultArtifactThreshold = 64 << 10

// previewBytes is how much of an artifact an event carries inline.
const previewBytes = 512

// ErrArtifactNotFound: no artifact has that id.
var ErrArtifactNotFound = errors.New("artifact not found")

// Artifacts stores large payloads once, by content, as files under a
// directory (by convention <data-dir>/artifacts): the artifact
// "sha256:<hex>" is the file <dir>/sha256/<hex[:2]>/<hex>.
//
// Files rather than a Pebble keyspace: artifacts are part of the record
// (events refer to them), so they must not live in the projection store,
// which a rebuild may wipe; they must not bloat the log's database, which
// stores every value twice; and a file can be read while a server holds the
// databases' locks.
//
// Put is durable when it returns (file and directory synced) and
// idempotent; an artifact is never changed once written. Artifacts is safe
// for concurrent use, by several processes too (writes go through a
// temporary file and a rename).
type Artifacts struct {
	Dir string
	// Threshold is the size in bytes above which Offload stores a tool
	// output. Zero means DefaultArtifactThreshold.
	Threshold int
}

// Put stores data and returns its reference.
func (a Artifacts) Put(data []byte, mediaType string) (conversation.ArtifactRef, error) {
	sum := sha256.Sum256(data)
	hexsum := hex.EncodeToString(sum[:])
	ref := conversation.ArtifactRef{ID: "sha256:" + hexsum, Size: int64(len(data)), MediaType: mediaType, Preview: preview(data)}
	path := a.path(hexsum)
	if _, err := os.Stat(path); err == nil {
		return ref, nil // stored once
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ref, fmt.Errorf("artifact %s: %w", ref.ID, err)
	}
	tmp, err := os.CreateTemp(dir, hexsum+".tmp*")
	if err != nil {
		return ref, fmt.Errorf("artifact %s: %w", ref.ID, err)
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return ref, fmt.Errorf("artifact %s: %w", ref.ID, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return ref, fmt.Errorf("artifact %s: %w", ref.ID, err)
	}
	if d, err := os.Open(dir); err == nil {
		err = d.Sync()
		_ = d.Close()
		if err != nil {
			return ref, fmt.Errorf("artifact %s: sync directory: %w", ref.ID, err)
		}
	}
	return ref, nil
}

// Get returns the content of artifact id ("sha256:<hex>"), checked against
// its hash. An unknown id is an error wrapping ErrArtifactNotFound.
func (a Artifacts) Get(id string) ([]byte, error) {
	hexsum, ok := strings.CutPrefix(id, "sha256:")
	if !ok || len(hexsum) != 64 || strings.Trim(hexsum, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("artifact %q: want sha256:<64 hex digits>: %w", id, ErrArtifactNotFound)
	}
	data, err := os.ReadFile(a.path(hexsum))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("artifact %s: %w", id, ErrArtifactNotFound)
	}
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hexsum {
		return nil, fmt.Errorf("artifact %s: content does not match its hash", id)
	}
	return data, nil
}

func (a Artifacts) path(hexsum string) string {
	return filepath.Join(a.Dir, "sha256", hexsum[:2], hexsum)
}

// Offload stores the output of a conversation.tool.completed event as an
// artifact when its JSON is larger than the threshold, and rewrites the
// event's data to carry output_ref (with a preview) instead. It reports
// whether it did. Other events, and small outputs, are left alone. The
// runtime calls it before it validates and appends the event, so the log
// and llm_context stay small.
func (a Artifacts) Offload(s *bus.Signal) (bool, error) {
	if s.Type() != conversation.ToolCompleted {
		return false, nil
	}
	limit := a.Threshold
	if limit <= 0 {
		limit = DefaultArtifactThreshold
	}
	if len(s.Data()) <= limit {
		return false, nil
	}
	var d conversation.Data
	if err := json.Unmarshal(s.Data(), &d); err != nil {
		return false, bus.Errorf(bus.ReasonMalformed, "conversation.tool.completed %s: data is not JSON: %v", s.ID(), err)
	}
	if len(d.Output) <= limit {
		return false, nil
	}
	content, media := []byte(d.Output), "application/json"
	var text string
	if json.Unmarshal(d.Output, &text) == nil {
		content, media = []byte(text), "text/plain; charset=utf-8"
	}
	ref, err := a.Put(content, media)
	if err != nil {
		return false, err
	}
	d.Output, d.OutputRef = nil, &ref
	return true, bus.SetJSONData(s, d)
}

// preview is the first bytes of data, cut at a UTF-8 boundary.
func preview(data []byte) string {
	if len(data) <= previewBytes {
		return strings.ToValidUTF8(string(data), "")
	}
	cut := previewBytes
	for cut > 0 && !utf8.RuneStart(data[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(data[:cut]), "")
}
