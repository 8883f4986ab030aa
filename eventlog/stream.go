package eventlog

import (
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// MaxStreamLen bounds the length of a stream name in bytes.
const MaxStreamLen = 1024

// ValidateStream reports whether name is a valid stream name: one or more
// segments of [A-Za-z0-9][A-Za-z0-9_.-]* joined by '/' ("agent/c1",
// "conversation/proj/conv", "dlq"). The grammar keeps 0x00 out of names,
// which the key layout relies on. The error is a *bus.Error of type
// ReasonInvalidStream that says what is wrong.
func ValidateStream(name string) error {
	if name == "" {
		return bus.Errorf(ReasonInvalidStream, "stream name is empty; use segments joined by '/', e.g. agent/c1")
	}
	if len(name) > MaxStreamLen {
		return bus.Errorf(ReasonInvalidStream, "stream name is %d bytes long, the limit is %d", len(name), MaxStreamLen)
	}
	i := 0
	for seg := range strings.SplitSeq(name, "/") { // every append checks its stream: no slice
		if i++; seg == "" {
			return bus.Errorf(ReasonInvalidStream, "stream %q has an empty segment at position %d", name, i-1)
		}
		if !isAlnum(seg[0]) {
			return bus.Errorf(ReasonInvalidStream, "stream %q: segment %q must start with a letter or digit", name, seg)
		}
		for j := 1; j < len(seg); j++ {
			if c := seg[j]; !isAlnum(c) && c != '_' && c != '-' && c != '.' {
				return bus.Errorf(ReasonInvalidStream, "stream %q: byte %q is not allowed; use [A-Za-z0-9_.-] and '/' between segments", name, c)
			}
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
