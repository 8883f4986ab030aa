package eventlog

import "strconv"

// ExpectedVersion is what an append requires of a stream's version (its
// head sequence) before it writes. The zero value is AnyVersion.
type ExpectedVersion int64

const (
	// AnyVersion appends whatever the stream's version.
	AnyVersion ExpectedVersion = 0
	// NoStream appends only to a stream that has no entries and never had
	// any (version 0).
	NoStream ExpectedVersion = -1
)

// ExactVersion appends only when the stream is at version v. ExactVersion(0)
// is NoStream.
func ExactVersion(v uint64) ExpectedVersion {
	if v == 0 {
		return NoStream
	}
	return ExpectedVersion(v)
}

func (e ExpectedVersion) String() string {
	switch {
	case e == AnyVersion:
		return "any"
	case e == NoStream:
		return "no stream"
	default:
		return strconv.FormatInt(int64(e), 10)
	}
}

func (e ExpectedVersion) matches(head uint64) bool {
	switch {
	case e == AnyVersion:
		return true
	case e == NoStream:
		return head == 0
	default:
		return e > 0 && uint64(e) == head
	}
}
