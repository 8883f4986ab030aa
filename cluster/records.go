package cluster

import (
	"strconv"
	"strings"
	"time"
)

// The bucket's keys.
const (
	configKey       = "config"
	nodeKeyPrefix   = "nodes."
	partitionPrefix = "partitions."
)

func nodeKey(id string) string        { return nodeKeyPrefix + id }
func partitionKey(p int) string       { return partitionPrefix + strconv.Itoa(p) }
func bucketName(prefix string) string { return strings.ToUpper(prefix) + "_CLUSTER" }

// parseKey tells a key of the bucket: a node's ("nodes.n1" → node "n1") or
// a partition's ("partitions.3" → 3); ok is false for anything else.
func parseKey(key string) (node string, p int, isNode, ok bool) {
	if id, found := strings.CutPrefix(key, nodeKeyPrefix); found && validNodeID.MatchString(id) {
		return id, 0, true, true
	}
	if n, found := strings.CutPrefix(key, partitionPrefix); found {
		p, err := strconv.Atoi(n)
		if err == nil && p >= 0 && strconv.Itoa(p) == n {
			return "", p, false, true
		}
	}
	return "", 0, false, false
}

// configRecord is the value of "config", written once by the first member.
type configRecord struct {
	Partitions int `json:"partitions"`
	Replicas   int `json:"replicas"`
}

// nodeRecord is the value of "nodes.<id>", rewritten by the node every
// renewal interval. Its revision changing is what keeps the node alive to
// the others; the times in it are the writer's wall clock, for people.
type nodeRecord struct {
	ID      string    `json:"id"`
	Session string    `json:"session"` // new on every Join: tells this run's writes from another's
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Heartbeat is when the writer wrote this record, by its clock.
	Heartbeat      time.Time `json:"heartbeat"`
	LeaseTimeoutMS int64     `json:"lease_timeout_ms"`
	// Leaving is set by Leave: the others no longer hand partitions to
	// the node.
	Leaving bool `json:"leaving,omitempty"`
	// Recovering lists the partitions the bucket names the node the
	// owner of whose agents it is still bringing back from the log
	// (OnAcquire runs): the node is behind on them and their signals are
	// refused unavailable until it catches up.
	Recovering []int `json:"recovering,omitempty"`
}

// partitionRecord is the value of "partitions.<n>". Owner "" is vacant
// (released in order); the epoch grows by one on every acquisition and
// is kept by a release.
type partitionRecord struct {
	Owner string    `json:"owner"`
	Epoch uint64    `json:"epoch"`
	Since time.Time `json:"since"`
	// Session is the owner's session, so that an owner whose write's
	// acknowledgement was lost recognises the write as its own.
	Session string `json:"session,omitempty"`
	// LeaseTimeoutMS is the owner's lease timeout.
	LeaseTimeoutMS int64 `json:"lease_timeout_ms,omitempty"`
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
