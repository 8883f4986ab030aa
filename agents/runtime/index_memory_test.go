package runtime

import (
	"fmt"
	"maps"
	"testing"
	"unsafe"
)

// TestShrunkMakesAnEmptiedMapAgain: a map that held shrinkFrom entries or
// more is copied once it holds under a quarter of that, with every entry
// kept, and not before; a small map is never copied.
func TestShrunkMakesAnEmptiedMapAgain(t *testing.T) {
	m := map[string]int{}
	var peak mapPeak
	for i := range 2 * shrinkFrom {
		m[fmt.Sprint(i)] = i
		peak.grew(len(m))
	}
	if peak != 2*shrinkFrom {
		t.Fatalf("peak %d, want %d", peak, 2*shrinkFrom)
	}
	same := func(a, b map[string]int) bool {
		a["probe"], b["probe"] = 1, 2 // a write to one shows in the other only if they are one map
		defer delete(a, "probe")
		defer delete(b, "probe")
		return a["probe"] == b["probe"]
	}
	want := maps.Clone(m)
	i := 0
	for ; len(m) > 2*shrinkFrom/4; i++ {
		delete(m, fmt.Sprint(i))
		delete(want, fmt.Sprint(i))
		if got := shrunk(m, &peak); !same(got, m) {
			t.Fatalf("copied at %d entries, a quarter of the peak is %d", len(m), 2*shrinkFrom/4)
		}
	}
	delete(m, fmt.Sprint(i))
	delete(want, fmt.Sprint(i))
	got := shrunk(m, &peak)
	if same(got, m) {
		t.Fatalf("not copied at %d entries, under a quarter of the peak %d", len(m), 2*shrinkFrom)
	}
	if !maps.Equal(got, want) {
		t.Fatal("the copy lost or changed entries")
	}
	if int(peak) != len(got) {
		t.Fatalf("peak after the copy %d, want its size %d", peak, len(got))
	}

	small := map[string]int{"a": 1, "b": 2}
	var smallPeak mapPeak
	smallPeak.grew(shrinkFrom - 1)
	delete(small, "a")
	if got := shrunk(small, &smallPeak); !same(got, small) {
		t.Fatal("a map that never held shrinkFrom entries was copied")
	}
}

// TestPassiveEntryIsSmall pins the passive index's entry at 24 bytes: it
// is what a million passive agents cost beside their ids.
func TestPassiveEntryIsSmall(t *testing.T) {
	if size := unsafe.Sizeof(passiveAgent{}); size != 24 {
		t.Fatalf("passiveAgent is %d bytes, want 24", size)
	}
}
