package runtime

import "maps"

// What a passive agent costs is its entries in the runtime's indexes, so
// they are kept small (issue 24: a million passive counters held 262 B
// each, most of it map tables):
//   - a passive entry names its type by a 4-byte typeID, not a 16-byte
//     string header, and keeps no timer: the few passive agents with a
//     timer due have their wake-up in rt.wakes;
//   - a map that emptied is made again at its size (shrunk): Go's maps
//     never give back the table they grew, and a burst of a million
//     agents that then went passive left the active map's table — 56 B
//     an agent — allocated for good.

// typeID names an agent type in the passive index: rt.typeNames[id].
type typeID uint32

// typeIDOf returns the id of type name, interning it; rt.mu must be held
// for writing.
func (rt *Runtime) typeIDOf(name string) typeID {
	if id, ok := rt.typeIDs[name]; ok {
		return id
	}
	id := typeID(len(rt.typeNames))
	rt.typeNames = append(rt.typeNames, name)
	rt.typeIDs[name] = id
	return id
}

// typeName is the name of type id; rt.mu must be held.
func (rt *Runtime) typeName(id typeID) string { return rt.typeNames[id] }

// mapPeak is the most entries a map held since it was made.
type mapPeak int

// grew notes that a map holds n entries.
func (p *mapPeak) grew(n int) {
	if n > int(*p) {
		*p = mapPeak(n)
	}
}

// shrinkFrom is the peak below which a map is never made again: a small
// table costs little, and copying it on every few deletes would not pay.
const shrinkFrom = 4096

// shrunk returns m, or a copy of m sized to its entries once it holds
// fewer than a quarter of its peak p (at least shrinkFrom). Each copy
// follows at least three times as many deletes as it copies entries, so
// the copies cost O(1) per delete. Callers must not be ranging over m.
func shrunk[K comparable, V any](m map[K]V, p *mapPeak) map[K]V {
	if int(*p) < shrinkFrom || len(m) >= int(*p)/4 {
		return m
	}
	c := make(map[K]V, len(m))
	maps.Copy(c, m)
	*p = mapPeak(len(m))
	return c
}
