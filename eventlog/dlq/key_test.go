package dlq

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The digest key is made once, kept private, and the same after a
// restart, so a token has the same digest in every dead letter.
func TestDigestKeyIsKeptAcrossStarts(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(KeyFile(dir))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v, want mode 0600", fi, err)
	}
	k2, err := LoadKey(dir)
	if err != nil || !bytes.Equal(k1, k2) || len(k1) != 32 {
		t.Fatalf("second start: %x %v, want %x", k2, err, k1)
	}
	if err := os.WriteFile(KeyFile(dir), []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("a damaged key: %v, want an error saying what to do", err)
	}
}
