package bus

import (
	"fmt"
	"iter"
	"strings"
)

// Wildcard segments of a pattern.
const (
	// SingleWildcard matches exactly one segment.
	SingleWildcard = "*"
	// MultiWildcard matches zero or more segments, anywhere in a pattern.
	MultiWildcard = "**"
)

// MaxTypeLen bounds the length in bytes of a signal type or a pattern. It
// keeps matching cost bounded for input that arrives from the network.
const MaxTypeLen = 1024

// ValidatePattern reports whether pattern is a valid signal pattern: one or
// more segments joined by '.', each either a literal of [A-Za-z0-9_-]+, '*'
// or '**'. Empty patterns, empty segments ("a..b"), adjacent '**' ("a.**.**")
// and wildcards inside a segment ("us*er") are invalid. The error is an
// *Error of type ReasonInvalidPattern that says which segment is wrong.
func ValidatePattern(pattern string) error {
	if pattern == "" {
		return Errorf(ReasonInvalidPattern, "pattern is empty")
	}
	if len(pattern) > MaxTypeLen {
		return Errorf(ReasonInvalidPattern, "pattern is %d bytes long, the limit is %d", len(pattern), MaxTypeLen)
	}
	prevMulti := false
	for i, seg := range segments(pattern) {
		switch {
		case seg == "":
			return Errorf(ReasonInvalidPattern, "pattern %q has an empty segment at position %d", pattern, i)
		case seg == MultiWildcard:
			if prevMulti {
				return Errorf(ReasonInvalidPattern, "pattern %q has '**' twice in a row at position %d; one '**' already matches any number of segments", pattern, i)
			}
			prevMulti = true
			continue
		case seg == SingleWildcard:
		default:
			if err := validateLiteral(seg); err != nil {
				return Errorf(ReasonInvalidPattern, "pattern %q, segment %d %q: %v", pattern, i, seg, err)
			}
		}
		prevMulti = false
	}
	return nil
}

// ValidateType reports whether t is a valid signal type: one or more
// segments of [A-Za-z0-9_-]+ joined by '.'. The error is an *Error of type
// ReasonInvalidType.
func ValidateType(t string) error {
	if t == "" {
		return Errorf(ReasonInvalidType, "signal type is empty")
	}
	if len(t) > MaxTypeLen {
		return Errorf(ReasonInvalidType, "signal type is %d bytes long, the limit is %d", len(t), MaxTypeLen)
	}
	for i, seg := range segments(t) {
		if seg == "" {
			return Errorf(ReasonInvalidType, "signal type %q has an empty segment at position %d", t, i)
		}
		if err := validateLiteral(seg); err != nil {
			return Errorf(ReasonInvalidType, "signal type %q, segment %d %q: %v", t, i, seg, err)
		}
	}
	return nil
}

// segments yields the position and text of each '.'-separated segment of
// s, without allocating.
func segments(s string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for i := 0; ; i++ {
			j := strings.IndexByte(s, '.')
			if j < 0 {
				yield(i, s)
				return
			}
			if !yield(i, s[:j]) {
				return
			}
			s = s[j+1:]
		}
	}
}

func validateLiteral(seg string) error {
	for i := 0; i < len(seg); i++ {
		if !isSegmentByte(seg[i]) {
			if seg[i] == '*' {
				return fmt.Errorf("a wildcard must be a whole segment ('*' or '**')")
			}
			return fmt.Errorf("byte %q at offset %d is not allowed; use [A-Za-z0-9_-]", seg[i], i)
		}
	}
	return nil
}

func isSegmentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// MatchPattern reports whether signalType matches pattern with Jido's
// semantics: '*' matches exactly one segment, '**' matches zero or more
// segments ("audit.**" matches "audit"; "user.**.created" matches
// "user.created"). An invalid pattern or type matches nothing.
//
// MatchPattern does not allocate. Callers matching one pattern against many
// types may prefer CompilePattern, which validates once.
func MatchPattern(pattern, signalType string) bool {
	if ValidatePattern(pattern) != nil || ValidateType(signalType) != nil {
		return false
	}
	return matchSegments(pattern, signalType)
}

// matchSegments is glob matching over '.'-separated segments, with '*' as
// "exactly one" and '**' as "any run". It is the classic two-pointer
// algorithm that backtracks only to the most recent '**': when a later
// literal fails, that '**' swallows one more segment and matching resumes.
// This is linear in the common case and O(len(p)*len(t)) in the worst.
// Both inputs must be valid.
func matchSegments(p, t string) bool {
	pi, ti := 0, 0 // byte offsets of the current segments
	starP, starT := -1, -1
	for ti <= len(t) {
		if ti == len(t) {
			// Type consumed: what remains of the pattern must be '**' only.
			for pi < len(p) {
				seg, next := segmentAt(p, pi)
				if seg != MultiWildcard {
					goto backtrack
				}
				pi = next
			}
			return true
		}
		if pi < len(p) {
			pseg, pnext := segmentAt(p, pi)
			tseg, tnext := segmentAt(t, ti)
			switch {
			case pseg == MultiWildcard:
				starP, starT = pnext, ti
				pi = pnext
				continue
			case pseg == SingleWildcard || pseg == tseg:
				pi, ti = pnext, tnext
				continue
			}
		}
	backtrack:
		if starP < 0 {
			return false
		}
		// Let the last '**' swallow one more type segment.
		_, starT = segmentAt(t, starT)
		if starT > len(t) {
			return false
		}
		pi, ti = starP, starT
	}
	return false
}

// segmentAt returns the segment of s starting at byte offset i and the offset
// of the next segment (len(s)+1 past the last one, so callers can tell
// "consumed" from "one empty segment left").
func segmentAt(s string, i int) (seg string, next int) {
	if i >= len(s) {
		return "", len(s) + 1
	}
	if j := strings.IndexByte(s[i:], '.'); j >= 0 {
		return s[i : i+j], i + j + 1
	}
	return s[i:], len(s)
}

// Pattern is a validated, pre-split signal pattern. The zero value is not
// valid; use CompilePattern. A Pattern is immutable and safe for concurrent
// use.
type Pattern struct {
	text     string
	segments []string
}

// CompilePattern validates pattern and returns it in compiled form.
func CompilePattern(pattern string) (Pattern, error) {
	if err := ValidatePattern(pattern); err != nil {
		return Pattern{}, err
	}
	return Pattern{text: pattern, segments: strings.Split(pattern, ".")}, nil
}

// MustCompilePattern is CompilePattern for patterns fixed in the program; it
// panics on an invalid one.
func MustCompilePattern(pattern string) Pattern {
	p, err := CompilePattern(pattern)
	if err != nil {
		panic(err)
	}
	return p
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.text }

// Match reports whether signalType matches the pattern. An invalid type
// matches nothing.
func (p Pattern) Match(signalType string) bool {
	if p.text == "" || ValidateType(signalType) != nil {
		return false
	}
	return matchSegments(p.text, signalType)
}

// IsExact reports whether the pattern has no wildcard, so that it matches
// exactly one type (itself).
func (p Pattern) IsExact() bool {
	for _, s := range p.segments {
		if s == SingleWildcard || s == MultiWildcard {
			return false
		}
	}
	return true
}

// Specificity weights, compared position by position: a literal segment is
// more specific than '*', which is more specific than the end of a pattern
// (no more segments allowed), which is more specific than '**' (anything
// goes).
const (
	weightMulti   = 0
	weightEnd     = 1
	weightSingle  = 2
	weightLiteral = 3
)

// compareSpecificity orders two patterns by how specific they are: negative
// when a is more specific than b, positive when less, zero when equally
// specific. Earlier segments weigh more than later ones.
func compareSpecificity(a, b []string) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		wa, wb := segmentWeight(a, i), segmentWeight(b, i)
		if wa != wb {
			return wb - wa
		}
	}
	return 0
}

func segmentWeight(segs []string, i int) int {
	if i >= len(segs) {
		return weightEnd
	}
	switch segs[i] {
	case MultiWildcard:
		return weightMulti
	case SingleWildcard:
		return weightSingle
	default:
		return weightLiteral
	}
}
