package bus

import "strings"

// Coverage is the set of NATS subjects that covers a pattern under a base
// subject. NATS knows '*' (one token) and a trailing '>' (one or more tokens)
// only, so a pattern with '**' is subscribed as its NATS superset; when that
// superset is wider than the pattern, Filter is true and the subscriber must
// check each message with Pattern.Match (the type is the subject minus the
// base).
type Coverage struct {
	Subjects []string
	Filter   bool
}

// CoverPattern translates pattern into NATS subjects under base (for
// example base "jido.signal"), never producing an invalid subject:
//
//	"user.created"     → base.user.created
//	"user.*"           → base.user.*
//	"audit.**"         → base.audit and base.audit.>   (no filter needed)
//	"**"               → base.>                        (no filter needed)
//	"user.**.created"  → base.user.>                   (filtered in process)
//	"**.created"       → base.>                        (filtered in process)
//
// base must be a valid literal subject (NewSubjects checks the prefix).
func CoverPattern(base, pattern string) (Coverage, error) {
	if err := ValidatePattern(pattern); err != nil {
		return Coverage{}, err
	}
	segs := strings.Split(pattern, ".")
	for i, seg := range segs {
		if seg != MultiWildcard {
			continue
		}
		head := base
		if i > 0 {
			head += "." + strings.Join(segs[:i], ".")
		}
		if i == len(segs)-1 {
			if i == 0 {
				// "**" alone: every type, and a type has at least one segment.
				return Coverage{Subjects: []string{head + ".>"}}, nil
			}
			// Trailing "**" matches zero segments too: the head itself.
			return Coverage{Subjects: []string{head, head + ".>"}}, nil
		}
		// A leading or middle '**' is followed by at least one segment that
		// needs a token, so "head.>" covers it; the rest is checked in process.
		return Coverage{Subjects: []string{head + ".>"}, Filter: true}, nil
	}
	return Coverage{Subjects: []string{base + "." + pattern}}, nil
}
