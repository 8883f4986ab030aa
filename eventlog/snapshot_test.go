package eventlog

import (
	"context"
	"errors"
	"testing"
)

func TestSnapshots(t *testing.T) {
	ctx := context.Background()
	l := openMem(t, Options{})
	if _, err := l.LoadSnapshot("agent/a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no snapshot yet: %v", err)
	}
	mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
	steps := []struct {
		version uint64
		data    string
		wantErr error
	}{
		{2, "two", nil},
		{3, "three", nil},
		{4, "future", ErrWrongVersion}, // above the stream's version
		{1, "older", nil},              // a save replaces, whatever its version
	}
	for _, st := range steps {
		err := l.SaveSnapshot(ctx, "agent/a", st.version, []byte(st.data))
		if !errors.Is(err, st.wantErr) {
			t.Fatalf("save %d: %v, want %v", st.version, err, st.wantErr)
		}
	}
	s, err := l.LoadSnapshot("agent/a")
	if err != nil || s.Version != 1 || string(s.Data) != "older" || s.Stream != "agent/a" {
		t.Fatalf("load = %+v, %v", s, err)
	}
	// The caller owns the returned bytes.
	s.Data[0] = 'X'
	if again, _ := l.LoadSnapshot("agent/a"); string(again.Data) != "older" {
		t.Fatalf("snapshot changed through a returned slice: %q", again.Data)
	}
	// A damaged snapshot is reported, not returned.
	if err := l.db.Set(snapshotKey("agent/a"), []byte{snapshotFormatV1, 0, 0, 0, 0, 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.LoadSnapshot("agent/a"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged snapshot: %v", err)
	}
}
