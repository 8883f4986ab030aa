package cluster

import (
	"encoding/binary"
	"hash/fnv"
)

// desiredOwner is the node that should own partition p among the live
// nodes: the one with the highest rendezvous (HRW) score. Every node
// computes the same answer from the same set, and a node joining or
// leaving moves only the partitions it wins or held (about P/n of them).
// It is "" when no node is live.
func desiredOwner(live []string, p int) string {
	var (
		best      string
		bestScore uint64
	)
	for _, id := range live {
		s := hrwScore(id, p)
		if best == "" || s > bestScore || (s == bestScore && id < best) {
			best, bestScore = id, s
		}
	}
	return best
}

// hrwScore is node id's weight for partition p: FNV-1a over the id and p,
// then a 64-bit finaliser (FNV alone changes its high bits little between
// neighbouring partitions).
func hrwScore(id string, p int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	var b [9]byte
	binary.BigEndian.PutUint64(b[1:], uint64(p))
	h.Write(b[:])
	x := h.Sum64()
	// splitmix64's finaliser.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
