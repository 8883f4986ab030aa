package bus

import "strings"

// DefaultPrefix is the first token of every jido-bus subject.
const DefaultPrefix = "jido"

// Subject kinds, the second token of a subject after the prefix.
const (
	KindAgent  = "agent"  // <prefix>.agent.<agent-id>.<type>: a signal to one agent
	KindSignal = "signal" // <prefix>.signal.<type>: a broadcast
	KindEmit   = "emit"   // <prefix>.emit.<agent-id>.<type>: what an agent emits
	KindAPI    = "api"    // <prefix>.api.<area>.<verb>: the control plane
	KindDLQ    = "dlq"    // <prefix>.dlq.<reason>: dead letters
	KindHook   = "hook"   // <prefix>.hook.<project>.<event>: a project's hooks, asked by request/reply
)

// Subjects builds and parses the subject scheme of jido-bus under one
// prefix. The zero value uses DefaultPrefix. Subjects is a value type and
// safe for concurrent use.
type Subjects struct {
	// Prefix is one or more NATS tokens ("jido", "acme.jido"); empty means
	// DefaultPrefix.
	Prefix string
}

// NewSubjects returns Subjects for prefix after checking that it is one or
// more literal tokens, so that no subject built from it is invalid.
func NewSubjects(prefix string) (Subjects, error) {
	if prefix == "" {
		return Subjects{}, nil
	}
	if err := ValidateType(prefix); err != nil {
		return Subjects{}, Errorf(ReasonInvalidSubject, "subject prefix %q: segments must be [A-Za-z0-9_-]+ joined by '.'", prefix)
	}
	if strings.HasPrefix(prefix, "_") {
		// NATS clients keep subjects starting with '_' for inboxes
		// (_INBOX.…, and the roles' _INBOX_<user>.…): under such a prefix
		// every reply would land in the node's own subject space (and be
		// refused), and a user's inbox could cover the whole of it.
		return Subjects{}, Errorf(ReasonInvalidSubject, "subject prefix %q: a prefix may not start with '_', which NATS clients keep for inboxes (_INBOX); choose a name such as jido or acme.jido", prefix)
	}
	return Subjects{Prefix: prefix}, nil
}

// Name returns the prefix these subjects are under ("jido" by default),
// as a user passes it to --prefix.
func (s Subjects) Name() string { return s.prefix() }

func (s Subjects) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

// Agent returns the subject of a signal of type t to agent id.
func (s Subjects) Agent(id, t string) string { return s.prefix() + ".agent." + id + "." + t }

// Signal returns the broadcast subject of type t.
func (s Subjects) Signal(t string) string { return s.prefix() + ".signal." + t }

// Emit returns the subject on which agent id emits a signal of type t.
func (s Subjects) Emit(id, t string) string { return s.prefix() + ".emit." + id + "." + t }

// AppendEmit appends Emit(id, t) to dst, for a caller that builds the
// subject with other text into one string.
func (s Subjects) AppendEmit(dst []byte, id, t string) []byte {
	dst = append(dst, s.prefix()...)
	dst = append(dst, ".emit."...)
	dst = append(dst, id...)
	dst = append(dst, '.')
	return append(dst, t...)
}

// API returns the control-plane subject of verb in area ("agent", "start").
func (s Subjects) API(area, verb string) string { return s.prefix() + ".api." + area + "." + verb }

// Hook returns the subject on which project's hook at event
// ("tool.before") is asked: services subscribe to it, in a queue group to
// share the load.
func (s Subjects) Hook(project, event string) string {
	return s.prefix() + "." + KindHook + "." + project + "." + event
}

// Ping returns the subject a node answers health checks on.
func (s Subjects) Ping() string { return s.prefix() + ".api.ping" }

// DLQ returns the dead-letter subject for reason.
func (s Subjects) DLQ(reason string) string { return s.prefix() + ".dlq." + reason }

// All returns the wildcard subject covering every subject of kind
// ("jido.agent.>"); with kind "" it covers everything under the prefix.
func (s Subjects) All(kind string) string {
	if kind == "" {
		return s.prefix() + ".>"
	}
	return s.prefix() + "." + kind + ".>"
}

// Address is a parsed subject.
type Address struct {
	Kind    string // one of the Kind constants
	AgentID string // for KindAgent and KindEmit
	Type    string // the signal type for KindAgent, KindSignal, KindEmit
	Area    string // for KindAPI
	Verb    string // for KindAPI; may hold several tokens
	Reason  string // for KindDLQ
}

// Parse splits subject into its parts and validates them: the agent id
// grammar for agent and emit subjects, the type grammar for signal types.
// The error is an *Error whose type says what is wrong
// (ReasonInvalidSubject, ReasonInvalidAgentID or ReasonInvalidType).
func (s Subjects) Parse(subject string) (Address, error) {
	p := s.prefix() + "."
	if !strings.HasPrefix(subject, p) {
		return Address{}, Errorf(ReasonInvalidSubject, "subject %q is not under %q", subject, s.prefix())
	}
	kind, rest, _ := strings.Cut(subject[len(p):], ".")
	switch kind {
	case KindAgent, KindEmit:
		id, t, ok := strings.Cut(rest, ".")
		if !ok || t == "" {
			return Address{}, Errorf(ReasonInvalidSubject, "subject %q: want %s%s.<agent-id>.<type>", subject, p, kind)
		}
		if err := ValidateAgentID(id); err != nil {
			return Address{}, err
		}
		if err := ValidateType(t); err != nil {
			return Address{}, err
		}
		return Address{Kind: kind, AgentID: id, Type: t}, nil
	case KindSignal:
		if err := ValidateType(rest); err != nil {
			return Address{}, err
		}
		return Address{Kind: kind, Type: rest}, nil
	case KindAPI:
		area, verb, ok := strings.Cut(rest, ".")
		if !ok || area == "" || verb == "" {
			return Address{}, Errorf(ReasonInvalidSubject, "subject %q: want %sapi.<area>.<verb>", subject, p)
		}
		return Address{Kind: kind, Area: area, Verb: verb}, nil
	case KindDLQ:
		if rest == "" {
			return Address{}, Errorf(ReasonInvalidSubject, "subject %q: want %sdlq.<reason>", subject, p)
		}
		return Address{Kind: kind, Reason: rest}, nil
	}
	return Address{}, Errorf(ReasonInvalidSubject, "subject %q: unknown kind %q; want agent, signal, emit, api or dlq", subject, kind)
}

// MaxAgentIDLen bounds an agent id, in bytes (a child's id included, which
// is its parent's id, '/', its tag): ids travel in every subject, stream
// name and listing, which must stay well under NATS's limits.
const MaxAgentIDLen = 256

// ValidateAgentID reports whether id is a valid agent id: segments of
// [A-Za-z0-9][A-Za-z0-9_-]* joined by '/' ("billing", "team-1/worker_2"),
// at most MaxAgentIDLen bytes. The error is an *Error of type
// ReasonInvalidAgentID.
func ValidateAgentID(id string) error {
	if id == "" {
		return Errorf(ReasonInvalidAgentID, "agent id is empty")
	}
	if len(id) > MaxAgentIDLen {
		return Errorf(ReasonInvalidAgentID, "agent id %.32q… is %d bytes long; the limit is %d", id, len(id), MaxAgentIDLen)
	}
	i := 0
	for seg := range strings.SplitSeq(id, "/") { // on every signal's path: no slice
		if i++; seg == "" {
			return Errorf(ReasonInvalidAgentID, "agent id %q has an empty segment at position %d", id, i-1)
		}
		if seg[0] == '_' || seg[0] == '-' {
			return Errorf(ReasonInvalidAgentID, "agent id %q: segment %q must start with a letter or digit", id, seg)
		}
		for j := 0; j < len(seg); j++ {
			if !isSegmentByte(seg[j]) {
				return Errorf(ReasonInvalidAgentID, "agent id %q: byte %q is not allowed; use [A-Za-z0-9_-] and '/' between segments", id, seg[j])
			}
		}
	}
	return nil
}

// ChildID returns the id of the child spawned with tag by parent: "<parent>/<tag>".
func ChildID(parent, tag string) string { return parent + "/" + tag }
