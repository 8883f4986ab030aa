package jslog

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// RootID is the part of a log stream's name that decides its partition:
// the segment after the stream's kind ("agent/p/child" and "agent/p" give
// "p", and so does "conversation/p/c"), so that a parent, its children and
// the conversations under a project share one partition and a multi-stream
// append stays in one partition stream. A name of one segment is its own
// root.
func RootID(stream string) string {
	_, rest, ok := strings.Cut(stream, "/")
	if !ok {
		return stream
	}
	root, _, _ := strings.Cut(rest, "/")
	return root
}

// indexPrefix begins the name of a partition's own index stream
// (IndexStream), the one kind of stream whose partition is in its name.
const indexPrefix = "runtime/agents/"

// IndexStream names the runtime's index of the agents in partition p:
// every agent of a partition is listed in that partition's own stream, so
// that starting an agent (its stream and its index entry, in one atomic
// append) never spans two partitions, and a node taking over a partition
// reads the index of that partition only.
func IndexStream(p int) string { return indexPrefix + strconv.Itoa(p) }

// Partition is the partition, in [0, partitions), of a log stream: the
// 32-bit FNV-1a hash of its RootID modulo partitions (the hash NATS subject
// mapping's partition() uses), except for a partition's IndexStream, which
// belongs to the partition it names. It panics if partitions is not
// positive.
func Partition(stream string, partitions int) int {
	if partitions <= 0 {
		panic("jslog: Partition with partitions <= 0")
	}
	if n, ok := strings.CutPrefix(stream, indexPrefix); ok {
		if p, err := strconv.Atoi(n); err == nil && p >= 0 && strconv.Itoa(p) == n {
			return p % partitions
		}
	}
	h := fnv.New32a()
	h.Write([]byte(RootID(stream)))
	return int(h.Sum32() % uint32(partitions))
}

// subjectTokens encodes a valid stream name as subject tokens: '/' becomes
// the token separator '.', and a '.' inside a segment (which the stream
// grammar allows) becomes '~', which the grammar does not, so the encoding
// is reversible and no token is empty or a wildcard.
func subjectTokens(stream string) string {
	var b strings.Builder
	b.Grow(len(stream))
	for i := 0; i < len(stream); i++ {
		switch c := stream[i]; c {
		case '/':
			b.WriteByte('.')
		case '.':
			b.WriteByte('~')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// logSubject is the subject of stream in partition p.
func (l *Log) logSubject(stream string, p int) string {
	return l.opts.Prefix + ".log." + strconv.Itoa(p) + "." + subjectTokens(stream)
}

// snapshotSubject is the subject of stream's snapshot.
func (l *Log) snapshotSubject(stream string) string {
	return l.opts.Prefix + ".snap." + subjectTokens(stream)
}
