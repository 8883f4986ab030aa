package bus

import (
	"math"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/types"
)

// CloudEvents attributes are strings: "a sequence of allowable Unicode
// characters", which excludes the control characters U+0000–U+001F and
// U+007F–U+009F. Bytes that are not UTF-8, or a NUL, do not survive every
// path an attribute takes — a JSON record replaces them with U+FFFD, so a
// cmd record naming the signal "bad\xff" names "bad\uFFFD" once read
// back, and recovery no longer finds the signal it decided — so they are
// refused wherever a signal comes in, and again before the log stores it.

// checkAttributes checks every attribute of s as a CloudEvents string,
// extension names and values, and the time, and returns AttributeBytes(s).
func checkAttributes(s *Signal) (int, error) {
	return attributeBytes(s, true)
}

// CheckAttributeText returns an invalid_attribute error when v, the value
// of the attribute (or header) called name, is not a CloudEvents string:
// valid UTF-8 without control characters. Codecs call it on each value as
// it arrives, so the error names the header it came in.
func CheckAttributeText(name, v string) error { return checkText(name, v) }

func checkText(name, v string) error {
	// Nearly every attribute is printable ASCII: eight bytes at a time,
	// a word passes when no byte has its top bit set (non-ASCII), is below
	// 0x20 or is 0x7f; the loop below looks at the rest, and finds what a
	// word that fails holds. Every signal's attributes are checked here
	// when it is decoded, appended and dispatched.
	i := 0
	for ; i+8 <= len(v); i += 8 {
		if !printableASCII8(load64(v[i : i+8])) {
			break
		}
	}
	return checkTextFrom(name, v, i)
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load64 reads s's first eight bytes as one word (the compiler makes it
// one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// printableASCII8 reports whether each byte of w is in 0x20–0x7e.
func printableASCII8(w uint64) bool {
	// A byte b < 0x20 sets its top bit in b-0x20 (b has it clear: ASCII);
	// b == 0x7f is b+1 == 0x80. Borrows and carries between bytes happen
	// only from a byte that is itself caught, so no word passes wrongly.
	return w&msb == 0 && (w-0x20*lsb)&msb == 0 && (w+lsb)&msb == 0
}

func checkTextFrom(name, v string, i int) error {
	for i < len(v) {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return controlError(name, rune(c), i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && size == 1 {
			return Errorf(ReasonInvalidAttribute, "attribute %s is not valid UTF-8 (byte %#x at offset %d); CloudEvents attributes are Unicode strings", name, c, i)
		}
		if r <= 0x9f {
			return controlError(name, r, i)
		}
		i += size
	}
	return nil
}

func controlError(name string, r rune, at int) error {
	return Errorf(ReasonInvalidAttribute, "attribute %s holds the control character %U at offset %d; CloudEvents strings exclude U+0000-U+001F and U+007F-U+009F", name, r, at)
}

// The log stores a time as nanoseconds since 1970 in an int64; a time
// outside that range would come back as another time.
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

func checkTime(t time.Time) error {
	if t.Before(minTime) || t.After(maxTime) {
		return Errorf(ReasonInvalidAttribute, "attribute time %s is outside the range the log stores (%s to %s)",
			t.Format(time.RFC3339), minTime.Format(time.RFC3339), maxTime.Format(time.RFC3339))
	}
	return nil
}

// ValidExtensionName reports whether name is a CloudEvents extension
// attribute name: one or more lower-case ASCII letters and digits. (The
// sdk also takes upper-case letters, which a binary-mode reader, matching
// header names without regard to case, cannot tell apart.)
func ValidExtensionName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// extensionBytes counts the extensions' names and values in string form
// and, when check is set, checks them. Of several bad extensions the one
// first in name order is reported, so that the error does not depend on
// map order (and no names are sorted for a valid signal).
func extensionBytes(ext map[string]any, check bool) (int, error) {
	n := 0
	var bad string
	var badErr error
	for name, x := range ext {
		v, err := types.Format(x)
		n += len(name) + len(v)
		if !check || badErr != nil && name > bad {
			continue
		}
		switch {
		case !ValidExtensionName(name):
			err = Errorf(ReasonInvalidAttribute, "extension name %q is not lower-case letters and digits only", truncated(name))
		case err != nil:
			err = Errorf(ReasonInvalidAttribute, "extension %s holds a value of no CloudEvents type: %v", name, err)
		default:
			err = checkText(name, v)
		}
		if err != nil {
			bad, badErr = name, err
		}
	}
	if badErr != nil {
		return 0, badErr
	}
	return n, nil
}

// truncated shortens v for an error message: a refused value may be as
// large as the message that carried it.
func truncated(v string) string {
	const max = 64
	if len(v) <= max {
		return v
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}

// Excerpt returns v, or its start and "…" when v is long, for an error
// message: a refused value may be as large as the message that carried it,
// and the error travels in replies, logs and dead-letter headers.
func Excerpt(v string) string { return truncated(v) }
