package bus

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// Priority bounds of a route.
const (
	MinPriority = -100
	MaxPriority = 100
)

// RouteID identifies a route within its Router; it is never reused.
type RouteID uint64

// Route maps a signal pattern to a target of the caller's choosing (an
// action, a handler, an agent).
type Route[T any] struct {
	ID       RouteID
	Pattern  string
	Priority int
	Target   T

	segments []string
}

// Router finds the routes whose patterns match a signal type, ordered as
// DESIGN.md says: most specific pattern first (a literal segment outweighs
// '*', which outweighs '**'; earlier segments weigh more), then higher
// priority, then registration order.
//
// Patterns are compiled into a trie keyed by segment, so a lookup walks the
// type's segments and never scans the route list: its cost depends on the
// type's length and the number of matches, not on how many routes exist.
//
// A Router is safe for concurrent use; lookups share a read lock.
type Router[T any] struct {
	mu     sync.RWMutex
	root   *routeNode[T]
	byID   map[RouteID]*Route[T]
	nextID RouteID
}

type routeNode[T any] struct {
	literal map[string]*routeNode[T]
	single  *routeNode[T] // the child reached through '*'
	multi   *routeNode[T] // the child reached through '**'
	routes  []*Route[T]   // routes whose pattern ends here, in registration order
}

// NewRouter returns an empty router.
func NewRouter[T any]() *Router[T] {
	return &Router[T]{root: &routeNode[T]{}, byID: make(map[RouteID]*Route[T])}
}

// Add registers a route and returns its id. It fails with an *Error of type
// ReasonInvalidPattern for an invalid pattern or a priority outside
// MinPriority..MaxPriority.
func (r *Router[T]) Add(pattern string, priority int, target T) (RouteID, error) {
	if err := ValidatePattern(pattern); err != nil {
		return 0, err
	}
	if priority < MinPriority || priority > MaxPriority {
		return 0, Errorf(ReasonInvalidPattern, "route %q: priority %d is outside %d..%d", pattern, priority, MinPriority, MaxPriority)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	rt := &Route[T]{ID: r.nextID, Pattern: pattern, Priority: priority, Target: target, segments: strings.Split(pattern, ".")}
	n := r.root
	for _, seg := range rt.segments {
		n = n.child(seg)
	}
	n.routes = append(n.routes, rt)
	r.byID[rt.ID] = rt
	return rt.ID, nil
}

func (n *routeNode[T]) child(seg string) *routeNode[T] {
	switch seg {
	case SingleWildcard:
		if n.single == nil {
			n.single = &routeNode[T]{}
		}
		return n.single
	case MultiWildcard:
		if n.multi == nil {
			n.multi = &routeNode[T]{}
		}
		return n.multi
	}
	c := n.literal[seg]
	if c == nil {
		if n.literal == nil {
			n.literal = make(map[string]*routeNode[T])
		}
		c = &routeNode[T]{}
		n.literal[seg] = c
	}
	return c
}

// Remove unregisters the route with id and reports whether it existed.
func (r *Router[T]) Remove(id RouteID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.byID[id]
	if !ok {
		return false
	}
	delete(r.byID, id)
	n := r.root
	for _, seg := range rt.segments {
		n = n.child(seg)
	}
	n.routes = slices.DeleteFunc(n.routes, func(x *Route[T]) bool { return x.ID == id })
	return true
}

// Len returns the number of routes.
func (r *Router[T]) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byID)
}

// Match returns every route matching signalType, best first. An invalid type
// matches nothing.
func (r *Router[T]) Match(signalType string) []Route[T] {
	var buf [8]*Route[T]
	found := r.collect(buf[:0], signalType)
	slices.SortFunc(found, compareRoutes[T])
	out := make([]Route[T], len(found))
	for i, rt := range found {
		out[i] = *rt
	}
	return out
}

// First returns the best route for signalType, the one an agent runs.
func (r *Router[T]) First(signalType string) (Route[T], bool) {
	var buf [8]*Route[T]
	found := r.collect(buf[:0], signalType)
	if len(found) == 0 {
		return Route[T]{}, false
	}
	return *slices.MinFunc(found, compareRoutes[T]), true
}

// Routes returns every route, in the order a lookup would rank them if all
// matched.
func (r *Router[T]) Routes() []Route[T] {
	r.mu.RLock()
	all := make([]*Route[T], 0, len(r.byID))
	for _, rt := range r.byID {
		all = append(all, rt)
	}
	r.mu.RUnlock()
	slices.SortFunc(all, compareRoutes[T])
	out := make([]Route[T], len(all))
	for i, rt := range all {
		out[i] = *rt
	}
	return out
}

func (r *Router[T]) collect(out []*Route[T], signalType string) []*Route[T] {
	if ValidateType(signalType) != nil {
		return out
	}
	var segBuf [16]string
	segs := splitSegments(segBuf[:0], signalType)
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.root.collect(out, segs, 0)
}

func (n *routeNode[T]) collect(out []*Route[T], segs []string, i int) []*Route[T] {
	if i == len(segs) {
		out = appendUnique(out, n.routes)
		if n.multi != nil {
			out = n.multi.collect(out, segs, i) // a trailing '**' matches zero segments
		}
		return out
	}
	if c := n.literal[segs[i]]; c != nil {
		out = c.collect(out, segs, i+1)
	}
	if n.single != nil {
		out = n.single.collect(out, segs, i+1)
	}
	if n.multi != nil {
		for j := i; j <= len(segs); j++ {
			out = n.multi.collect(out, segs, j)
		}
	}
	return out
}

// appendUnique appends the routes not yet in out. A pattern with several
// '**' can reach the same route along more than one path; match lists are
// short, so a linear check beats a set.
func appendUnique[T any](out, routes []*Route[T]) []*Route[T] {
	for _, rt := range routes {
		if !slices.Contains(out, rt) {
			out = append(out, rt)
		}
	}
	return out
}

func compareRoutes[T any](a, b *Route[T]) int {
	if c := compareSpecificity(a.segments, b.segments); c != 0 {
		return c
	}
	if a.Priority != b.Priority {
		return b.Priority - a.Priority
	}
	return cmp.Compare(a.ID, b.ID)
}

// splitSegments splits s at '.' into dst without allocating when dst has
// room.
func splitSegments(dst []string, s string) []string {
	for {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return append(dst, s)
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}
