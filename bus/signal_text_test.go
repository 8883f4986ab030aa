package bus

import (
	"errors"
	"strings"
	"testing"
)

// checkTextByByte is checkText as it was before its word-at-a-time fast
// path: the reference the fast path must agree with, error for error.
func checkTextByByte(name, v string) error { return checkTextFrom(name, v, 0) }

// FuzzCheckText: checkText accepts and refuses exactly what the byte loop
// does, with the same error (the offset of the first bad byte included),
// whatever the bytes and wherever in a word they sit.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{
		"", "01JDQ7ZV3M6Y2S3QK0F5N8C9TB.0", "/agent/team/c1", "counter.changed", "a\x00b", "1234567\x1f", "1234567\x7f",
		"12345678\x7f", "~~~~~~~~ ", "naïve ☃", "bad\xff", "\u0085 next line", "\u009f", "\u00a0", strings.Repeat("x", 64) + "\x01",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, want := checkText("attr", v), checkTextByByte("attr", v)
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Fatalf("checkText(%q) = %v, the byte loop says %v", v, got, want)
		}
	})
}

// TestPrintableASCII8: every byte value in every position of a word of
// printable bytes — only 0x20–0x7e pass.
func TestPrintableASCII8(t *testing.T) {
	for pos := range 8 {
		for b := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(b)
			want := b >= 0x20 && b <= 0x7e
			if got := printableASCII8(load64(string(w))); got != want {
				t.Fatalf("byte %#x at %d: printable = %v, want %v", b, pos, got, want)
			}
		}
	}
	// A control character next to a byte it would borrow from.
	if printableASCII8(load64("\x00\x20\x20\x20\x20\x20\x20\x20")) || printableASCII8(load64("\x20\x20\x20\x20\x20\x20\x20\x00")) {
		t.Fatal("a NUL passed")
	}
	if err := checkText("id", "0123456789\x01"); !errors.Is(err, &Error{Type: ReasonInvalidAttribute}) || !strings.Contains(err.Error(), "offset 10") {
		t.Fatalf("checkText = %v, want the control character at offset 10", err)
	}
}

// BenchmarkCheckText compares checkText with the byte loop it replaced
// (by_byte), in one run, on an emitted signal's id, an agent's source and
// a non-ASCII value (which takes the byte loop after its first word).
func BenchmarkCheckText(b *testing.B) {
	for _, fn := range []struct {
		name  string
		check func(name, v string) error
	}{{"words", checkText}, {"by_byte", checkTextByByte}} {
		for _, v := range []struct{ name, v string }{
			{"id", "01JDQ7ZV3M6Y2S3QK0F5N8C9TB.0"}, {"source", "/agent/counter-17"}, {"unicode", "naïve ☃ unicode attribute value"},
		} {
			b.Run(fn.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := fn.check("id", v.v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
