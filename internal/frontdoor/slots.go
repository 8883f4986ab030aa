package frontdoor

import "sync"

// callerSlots counts each caller's requests in flight, up to max each:
// the door's share per caller (Options.MaxPerCaller), so that one token's
// requests — a flood of slow bodies, many streams — fill its own share
// and leave the others' alone. A caller with none in flight takes no
// memory.
type callerSlots struct {
	max      int
	mu       sync.Mutex
	inFlight map[string]int
}

func newCallerSlots(max int) *callerSlots {
	return &callerSlots{max: max, inFlight: map[string]int{}}
}

// take claims one of caller's slots, or reports false when all are taken.
func (s *callerSlots) take(caller string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[caller] >= s.max {
		return false
	}
	s.inFlight[caller]++
	return true
}

// give returns a slot take claimed.
func (s *callerSlots) give(caller string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[caller]--; s.inFlight[caller] <= 0 {
		delete(s.inFlight, caller)
	}
}
