package eventlog

import (
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTruncateAndDelete(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		before      uint64 // 0: DeleteStream
		wantRemoved int
		wantSeqs    []uint64 // agent/a afterwards
		wantInfo    *StreamInfo
		wantGlobal  []string // ids left in the global log
	}{
		{"truncate a prefix", 3, 2, []uint64{3, 4}, &StreamInfo{Stream: "agent/a", Head: 4, First: 3, Count: 2}, []string{"a3", "b1", "a4"}},
		{"truncate nothing", 1, 0, []uint64{1, 2, 3, 4}, &StreamInfo{Stream: "agent/a", Head: 4, First: 1, Count: 4}, []string{"a1", "a2", "a3", "b1", "a4"}},
		{"truncate past the head", 100, 4, nil, &StreamInfo{Stream: "agent/a", Head: 4, First: 5, Count: 0}, []string{"b1"}},
		{"delete the stream", 0, 4, nil, nil, []string{"b1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			l := openMem(t, Options{FS: fs})
			mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
			mustAppend(t, l, "agent/b", sig("t.x", "b1"))
			mustAppend(t, l, "agent/a", sig("t.x", "a4"))
			if err := l.SaveSnapshot(ctx, "agent/a", 2, []byte("state")); err != nil {
				t.Fatal(err)
			}
			var removed int
			var err error
			if tc.before == 0 {
				removed, err = l.DeleteStream(ctx, "agent/a")
			} else {
				removed, err = l.TruncateBefore(ctx, "agent/a", tc.before)
			}
			if err != nil || removed != tc.wantRemoved {
				t.Fatalf("removed %d, %v; want %d", removed, err, tc.wantRemoved)
			}
			check := func(l *Log) {
				t.Helper()
				info, err := l.Stream("agent/a")
				if tc.wantInfo == nil {
					if !errors.Is(err, ErrNotFound) {
						t.Fatalf("deleted stream: %v", err)
					}
					if _, err := l.LoadSnapshot("agent/a"); !errors.Is(err, ErrNotFound) {
						t.Fatalf("snapshot of a deleted stream: %v", err)
					}
				} else {
					info.Bytes = 0 // sizes are checked by Verify
					if diff := cmp.Diff(*tc.wantInfo, info); diff != "" {
						t.Fatalf("info (-want +got):\n%s", diff)
					}
					if got := seqs(collect(t, l.ReadStream("agent/a", ReadOptions{}))); !cmp.Equal(got, tc.wantSeqs, cmpopts.EquateEmpty()) {
						t.Fatalf("seqs = %v, want %v", got, tc.wantSeqs)
					}
				}
				var ids []string
				for _, e := range collect(t, l.ReadAll(ReadOptions{})) {
					ids = append(ids, e.Event.ID())
				}
				if diff := cmp.Diff(tc.wantGlobal, ids); diff != "" {
					t.Fatalf("global (-want +got):\n%s", diff)
				}
				report, err := l.Verify(ctx, nil)
				if err != nil || !report.OK() {
					t.Fatalf("verify: %v %v", err, report.Damaged)
				}
			}
			check(l)
			// The same after a reopen: metadata and tombstones are durable.
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2, err := Open("db", Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			check(l2)
			// A re-sent event whose original was removed is appended again;
			// a deleted stream starts again at version 1.
			res, err := l2.Append(ctx, "agent/a", AnyVersion, sig("t.x", "a1"))
			if err != nil || res.Positions[0].Duplicate != (tc.wantRemoved == 0) {
				t.Fatalf("re-append of a1: %+v %v", res, err)
			}
			if tc.before == 0 && res.Version != 1 {
				t.Fatalf("recreated stream at version %d", res.Version)
			}
		})
	}
}

func TestMetadata(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
	mustAppend(t, l, "conversation/p/c", sig("t.x", "c1"))
	mustAppend(t, l, "agent/a/child", sig("t.x", "k1"))
	var names []string
	for _, s := range l.Streams("agent/") {
		names = append(names, s.Stream)
	}
	if diff := cmp.Diff([]string{"agent/a", "agent/a/child"}, names); diff != "" {
		t.Fatalf("streams (-want +got):\n%s", diff)
	}
	info, err := l.Stream("agent/a")
	if err != nil {
		t.Fatal(err)
	}
	var bytes uint64
	for _, e := range collect(t, l.ReadStream("agent/a", ReadOptions{})) {
		bytes += uint64(e.Size)
	}
	if info.Head != 3 || info.Count != 3 || info.First != 1 || info.Bytes != bytes || bytes == 0 {
		t.Fatalf("info = %+v, entry bytes %d", info, bytes)
	}
	if _, err := l.TruncateBefore(t.Context(), "agent/none", 2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("truncate unknown stream: %v", err)
	}
}
