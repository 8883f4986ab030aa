package checkpoint

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// clock hands out times one second apart, so the order of first
// checkpoints is the order of the calls.
func clock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func TestKeepAndContent(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Keep("p/c1", []byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h != Hash([]byte("hello\n")) {
		t.Fatalf("hash %s", h)
	}
	got, err := s.Content(h)
	if err != nil || string(got) != "hello\n" {
		t.Fatalf("content %q, %v", got, err)
	}
	if _, err := s.Content(Hash([]byte("other"))); !errors.Is(err, ErrNotKept) {
		t.Fatalf("a content never kept: %v, want ErrNotKept", err)
	}
	if _, err := s.Content("sha256:../../etc"); err == nil {
		t.Fatal("a hash that is not hex was read")
	}
}

// The store stays under its cap by forgetting the conversation whose
// first checkpoint is oldest; the one keeping is never forgotten for
// itself, and a content over the cap is refused ErrFull.
func TestBoundedOldestConversationFirst(t *testing.T) {
	s, err := Open(t.TempDir(), Options{MaxBytes: 100, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Keep("p/old", bytes.Repeat([]byte("a"), 40))
	b, _ := s.Keep("p/mid", bytes.Repeat([]byte("b"), 40))
	c, err := s.Keep("p/new", bytes.Repeat([]byte("c"), 40))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Content(a); !errors.Is(err, ErrNotKept) {
		t.Fatalf("the oldest conversation's content is still there (%v)", err)
	}
	for _, h := range []string{b, c} {
		if _, err := s.Content(h); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
	if n, _ := s.Size(); n > 100 {
		t.Fatalf("size %d over the cap", n)
	}
	if _, err := s.Keep("p/new", bytes.Repeat([]byte("d"), 101)); !errors.Is(err, ErrFull) {
		t.Fatalf("a content over the cap: %v, want ErrFull", err)
	}
	// p/new alone holds 40 and keeps 60 more: p/mid goes, p/new stays.
	if _, err := s.Keep("p/new", bytes.Repeat([]byte("e"), 60)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Content(b); !errors.Is(err, ErrNotKept) {
		t.Fatal("p/mid was not forgotten to make room")
	}
	if _, err := s.Content(c); err != nil {
		t.Fatalf("the keeping conversation lost its own content: %v", err)
	}
	if _, err := s.Keep("p/new", bytes.Repeat([]byte("f"), 10)); !errors.Is(err, ErrFull) {
		t.Fatalf("with nothing left to forget but its own: %v, want ErrFull", err)
	}
}

// Forget removes a conversation's contents unless another one (a
// rewind's fork) holds them too.
func TestForgetCollectsUnheldContents(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	shared, _ := s.Keep("p/c1", []byte("shared"))
	own, _ := s.Keep("p/c1", []byte("own"))
	if err := s.Ref("p/fork", []string{shared, Hash([]byte("never kept"))}); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget("p/c1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Content(own); !errors.Is(err, ErrNotKept) {
		t.Fatalf("a forgotten conversation's own content: %v, want ErrNotKept", err)
	}
	if _, err := s.Content(shared); err != nil {
		t.Fatalf("the fork's content went with its parent: %v", err)
	}
	if err := s.Forget("p/fork"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Size(); n != 0 {
		t.Fatalf("%d bytes left after every conversation was forgotten", n)
	}
	if err := s.Forget("p/unknown"); err != nil {
		t.Fatalf("forgetting a conversation with no checkpoint: %v", err)
	}
}
