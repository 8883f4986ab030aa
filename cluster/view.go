package cluster

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// observed is what this member knows of one key: its revision, whether it
// holds a value, and when, on this member's monotonic clock, it last saw
// the key change. Liveness is judged from changed alone: no clock of
// another machine is compared with this one.
type observed struct {
	rev     uint64
	present bool
	changed time.Time
}

type nodeView struct {
	observed
	rec nodeRecord
}

type partView struct {
	observed
	rec partitionRecord
}

// view is the bucket as this member's watch has delivered it, plus its own
// writes.
type view struct {
	joined time.Time // when the member began watching: the "changed" of keys it has not seen
	nodes  map[string]*nodeView
	parts  []partView
}

func newView(partitions int, now time.Time) *view {
	v := &view{joined: now, nodes: map[string]*nodeView{}, parts: make([]partView, partitions)}
	for p := range v.parts {
		v.parts[p].changed = now
	}
	return v
}

// setNode records revision rev of node id's key (rec is ignored when
// present is false). An older revision than the one known is ignored: the
// watch may deliver after a write of this member's own was recorded.
func (v *view) setNode(id string, rev uint64, present bool, rec nodeRecord, now time.Time) bool {
	n := v.nodes[id]
	if n == nil {
		n = &nodeView{}
		v.nodes[id] = n
	}
	if rev <= n.rev {
		return false
	}
	n.observed = observed{rev: rev, present: present, changed: now}
	if present {
		n.rec = rec
	}
	return true
}

func (v *view) setPartition(p int, rev uint64, present bool, rec partitionRecord, now time.Time) bool {
	if p < 0 || p >= len(v.parts) || rev <= v.parts[p].rev {
		return false
	}
	v.parts[p].observed = observed{rev: rev, present: present, changed: now}
	if present {
		v.parts[p].rec = rec
	} else {
		v.parts[p].rec = partitionRecord{}
	}
	return true
}

// observe records a watched entry; it reports the key's kind and whether
// the view changed.
func (v *view) observe(e jetstream.KeyValueEntry, now time.Time) (node string, p int, isNode, changed bool) {
	node, p, isNode, ok := parseKey(e.Key())
	if !ok {
		return "", 0, false, false
	}
	present := e.Operation() == jetstream.KeyValuePut
	if isNode {
		var rec nodeRecord
		if present && json.Unmarshal(e.Value(), &rec) != nil {
			present = false // not ours to read: as good as absent
		}
		return node, 0, true, v.setNode(node, e.Revision(), present, rec, now)
	}
	var rec partitionRecord
	if present && json.Unmarshal(e.Value(), &rec) != nil {
		present = false
	}
	return "", p, false, v.setPartition(p, e.Revision(), present, rec, now)
}

// timeoutOf is how long a record of node id may stand unchanged before
// this member judges it dead: the longer of the node's own lease timeout
// (declared) and this member's (own).
func timeoutOf(declaredMS int64, own time.Duration) time.Duration {
	return max(msDuration(declaredMS), own)
}

// alive reports whether node id is alive to this member: its key holds a
// record that changed within its lease timeout.
func (v *view) alive(id string, own time.Duration, now time.Time) bool {
	n := v.nodes[id]
	return n != nil && n.present && now.Sub(n.changed) <= timeoutOf(n.rec.LeaseTimeoutMS, own)
}

// live reports whether node id may be given partitions: alive and not
// leaving.
func (v *view) live(id string, own time.Duration, now time.Time) bool {
	return v.alive(id, own, now) && !v.nodes[id].rec.Leaving
}

// liveNodes is every node alive to this member other than self, sorted.
func (v *view) liveNodes(self string, own time.Duration, now time.Time) []string {
	var ids []string
	for id := range v.nodes {
		if id != self && v.live(id, own, now) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// expiredFor is how long partition p's lease has been past its timeout on
// this member's clock (zero or less: not expired). A partition's owner
// renews its record, so an owner that is alive and connected keeps
// changing its revision; a member whose watch is behind may think a lease
// expired that is not, but its write, conditional on the revision it saw,
// is then refused.
func (v *view) expiredFor(p int, own time.Duration, now time.Time) time.Duration {
	pv := &v.parts[p]
	return now.Sub(pv.changed) - timeoutOf(pv.rec.LeaseTimeoutMS, own)
}
