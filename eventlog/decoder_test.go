package eventlog

import (
	"testing"
	"time"
)

// TestDecoderSources: one decoder decoding entries whose sources come and
// go (two alternating, as in an agent's stream, then a third, then an
// older one again) gives each entry its own source.
func TestDecoderSources(t *testing.T) {
	sources := []string{"bench/replay", "/agent/a", "bench/replay", "/agent/a", "https://example.com/x?q=1", "/agent/a", "bench/replay", "bench/replay", "urn:x", "/agent/a"}
	var d decoder
	for i, src := range sources {
		s := sig("t.x", "id")
		s.SetSource(src)
		e, err := d.decode(encodeEntry(nil, "agent/a", uint64(i+1), uint64(i+1), time.Unix(1, 0), &s))
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Event.Source(); got != src {
			t.Errorf("entry %d: source %q, want %q", i, got, src)
		}
	}
}
