package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
)

// Defaults and bounds of Options. The bounds keep one agent from holding
// unbounded memory (its queue) or making its recovery unbounded (its
// snapshots).
const (
	DefaultMaxQueueSize  = 10_000
	MaxMaxQueueSize      = 1_000_000
	DefaultMaxQueueBytes = 64 << 20 // 64 MiB
	MinMaxQueueBytes     = 1 << 10  // 1 KiB
	MaxMaxQueueBytes     = 1 << 30  // 1 GiB
	DefaultSnapshotEvery = 100
	MaxSnapshotEvery     = 1_000_000
)

// Parent-death behaviours (Options.OnParentDeath).
const (
	OnParentDeathStop       = "stop"        // the child stops too (the default)
	OnParentDeathContinue   = "continue"    // the child runs on without a parent
	OnParentDeathEmitOrphan = "emit_orphan" // the child gets jido.agent.orphaned and runs on
)

// Options are an agent's start options, as given to Start in Go or in the
// "options" member of jido.api.agent.start. They are stored in the agent's
// first log entry, so they survive a restart. The zero value is valid and
// applies every default.
type Options struct {
	// ErrorPolicy decides what an Error directive does; the zero value is
	// log_only.
	ErrorPolicy ErrorPolicy `json:"error_policy,omitzero"`
	// MaxQueueSize bounds the signals waiting to be decided plus the
	// directives waiting to be executed; past it, new signals are refused
	// with queue_overflow before anything is committed. Zero means
	// DefaultMaxQueueSize; 1..MaxMaxQueueSize.
	MaxQueueSize int `json:"max_queue_size,omitempty"`
	// MaxQueueBytes bounds the bytes of the signals waiting to be decided
	// plus those of the signals whose directives wait to be executed
	// (data and attributes); past it, new signals are refused with
	// queue_overflow before anything is committed. Zero means
	// DefaultMaxQueueBytes; MinMaxQueueBytes..MaxMaxQueueBytes.
	MaxQueueBytes int `json:"max_queue_bytes,omitempty"`
	// OnParentDeath is what a child does when its parent stops: "stop"
	// (default), "continue" or "emit_orphan".
	OnParentDeath string `json:"on_parent_death,omitempty"`
	// DefaultDispatch is where Emit directives without a dispatch of their
	// own deliver; nil means NATS on <prefix>.emit.<agent-id>.<type>.
	DefaultDispatch *dispatch.Config `json:"default_dispatch,omitempty"`
	// SnapshotEvery is how many signals pass between snapshots of the
	// agent's state, 1..MaxSnapshotEvery; zero means DefaultSnapshotEvery.
	// (Agents started before this bound with a negative value, which
	// turned snapshots off, recover as they were.)
	SnapshotEvery int `json:"snapshot_every,omitempty"`
}

func (o Options) maxQueueSize() int {
	if o.MaxQueueSize == 0 {
		return DefaultMaxQueueSize
	}
	return o.MaxQueueSize
}

func (o Options) maxQueueBytes() int {
	if o.MaxQueueBytes == 0 {
		return DefaultMaxQueueBytes
	}
	return o.MaxQueueBytes
}

func (o Options) snapshotEvery() int {
	if o.SnapshotEvery == 0 {
		return DefaultSnapshotEvery
	}
	return o.SnapshotEvery
}

func (o Options) onParentDeath() string {
	if o.OnParentDeath == "" {
		return OnParentDeathStop
	}
	return o.OnParentDeath
}

// Validate checks the options against the error-policy functions the
// runtime knows (policies). The error is a *bus.Error of type
// invalid_request naming the option.
func (o Options) Validate(policies map[string]ErrorPolicyFunc) error {
	if o.MaxQueueSize < 0 || o.MaxQueueSize > MaxMaxQueueSize {
		return bus.Errorf(bus.ReasonInvalidRequest, "option max_queue_size: %d is out of range 1..%d; leave it out for %d", o.MaxQueueSize, MaxMaxQueueSize, DefaultMaxQueueSize)
	}
	if o.MaxQueueBytes != 0 && (o.MaxQueueBytes < MinMaxQueueBytes || o.MaxQueueBytes > MaxMaxQueueBytes) {
		return bus.Errorf(bus.ReasonInvalidRequest, "option max_queue_bytes: %d is out of range %d..%d; leave it out for %d", o.MaxQueueBytes, MinMaxQueueBytes, MaxMaxQueueBytes, DefaultMaxQueueBytes)
	}
	if o.SnapshotEvery < 0 || o.SnapshotEvery > MaxSnapshotEvery {
		return bus.Errorf(bus.ReasonInvalidRequest, "option snapshot_every: %d is out of range 1..%d; leave it out for %d", o.SnapshotEvery, MaxSnapshotEvery, DefaultSnapshotEvery)
	}
	switch o.OnParentDeath {
	case "", OnParentDeathStop, OnParentDeathContinue, OnParentDeathEmitOrphan:
	default:
		return bus.Errorf(bus.ReasonInvalidRequest, "option on_parent_death: %q is not one of stop, continue, emit_orphan", o.OnParentDeath)
	}
	if o.DefaultDispatch != nil {
		if err := o.DefaultDispatch.Validate(); err != nil {
			return bus.Errorf(bus.ReasonInvalidRequest, "option default_dispatch: %s", bus.AsError(err).Message)
		}
	}
	return o.ErrorPolicy.validate(policies)
}

// admitDispatch checks the options' dispatch targets against the node's
// webhook policy (env.Webhooks), so that a start whose options name a
// webhook the operator does not allow is refused before anything is
// stored. The error keeps dispatch.Admit's type: forbidden for the
// policy's refusals, invalid_request for a secret_env that is not set.
func (o Options) admitDispatch(env dispatch.Env) error {
	for _, c := range []struct {
		option string
		cfg    *dispatch.Config
	}{{"default_dispatch", o.DefaultDispatch}, {"error_policy.emit_signal", o.ErrorPolicy.Dispatch}} {
		if c.cfg == nil {
			continue
		}
		if err := dispatch.Admit(*c.cfg, env); err != nil {
			e := bus.AsError(err)
			return bus.Errorf(e.Type, "option %s: %s", c.option, e.Message)
		}
	}
	return nil
}

// Error-policy kinds.
const (
	PolicyLogOnly     = "log_only"      // log the error and carry on (the default)
	PolicyStopOnError = "stop_on_error" // stop the agent at the first error
	PolicyEmitSignal  = "emit_signal"   // emit jido.agent.error to a dispatch target and carry on
	PolicyMaxErrors   = "max_errors"    // carry on until the Nth error, then stop
	PolicyFunc        = "func"          // call a Go function registered with the runtime
)

// ErrorPolicy is what an agent does with an Error directive. In JSON it is
// "log_only", "stop_on_error", {"emit_signal": <dispatch config>},
// {"max_errors": N} or {"func": "<name registered in Config.ErrorPolicies>"}.
type ErrorPolicy struct {
	Kind      string
	Dispatch  *dispatch.Config // for emit_signal; nil means the agent's default dispatch
	MaxErrors int              // for max_errors
	Func      string           // for func
}

// IsZero reports whether p is the default policy.
func (p ErrorPolicy) IsZero() bool { return p.Kind == "" || p == ErrorPolicy{Kind: PolicyLogOnly} }

func (p ErrorPolicy) kind() string {
	if p.Kind == "" {
		return PolicyLogOnly
	}
	return p.Kind
}

func (p ErrorPolicy) validate(policies map[string]ErrorPolicyFunc) error {
	switch p.kind() {
	case PolicyLogOnly, PolicyStopOnError:
	case PolicyEmitSignal:
		if p.Dispatch != nil {
			if err := p.Dispatch.Validate(); err != nil {
				return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy.emit_signal: %s", bus.AsError(err).Message)
			}
		}
	case PolicyMaxErrors:
		if p.MaxErrors < 1 {
			return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy.max_errors: want a positive number of errors, got %d", p.MaxErrors)
		}
	case PolicyFunc:
		if _, ok := policies[p.Func]; !ok {
			return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy.func: no error policy %q is registered with the runtime", p.Func)
		}
	default:
		return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy: %q is not one of log_only, stop_on_error, emit_signal, max_errors, func", p.Kind)
	}
	return nil
}

// MarshalJSON writes the forms UnmarshalJSON reads.
func (p ErrorPolicy) MarshalJSON() ([]byte, error) {
	switch p.kind() {
	case PolicyLogOnly, PolicyStopOnError:
		return json.Marshal(p.kind())
	case PolicyEmitSignal:
		if p.Dispatch == nil {
			return json.Marshal(PolicyEmitSignal)
		}
		return json.Marshal(map[string]*dispatch.Config{PolicyEmitSignal: p.Dispatch})
	case PolicyMaxErrors:
		return json.Marshal(map[string]int{PolicyMaxErrors: p.MaxErrors})
	case PolicyFunc:
		return json.Marshal(map[string]string{PolicyFunc: p.Func})
	}
	return nil, fmt.Errorf("error policy: unknown kind %q", p.Kind)
}

// UnmarshalJSON reads a policy in any of its JSON forms.
func (p *ErrorPolicy) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var kind string
		if err := json.Unmarshal(b, &kind); err != nil {
			return err
		}
		*p = ErrorPolicy{Kind: kind}
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy: want a string or an object such as {\"max_errors\":3}")
	}
	if len(obj) != 1 {
		return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy: an object form has exactly one member, got %d", len(obj))
	}
	for kind, v := range obj {
		*p = ErrorPolicy{Kind: kind}
		var err error
		switch kind {
		case PolicyEmitSignal:
			var cfg dispatch.Config
			err = json.Unmarshal(v, &cfg)
			p.Dispatch = &cfg
		case PolicyMaxErrors:
			err = json.Unmarshal(v, &p.MaxErrors)
		case PolicyFunc:
			err = json.Unmarshal(v, &p.Func)
		default:
			return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy: %q is not one of emit_signal, max_errors, func", kind)
		}
		if err != nil {
			return bus.Errorf(bus.ReasonInvalidRequest, "option error_policy.%s: %s", kind, bus.AsError(err).Message)
		}
	}
	return nil
}

// limitOptions are the options whose zero value in Go means "the default".
// In JSON the default is asked for by leaving the option out, so a 0 there
// is a mistake (an agent that could queue nothing, or snapshot never) and
// is refused rather than quietly read as the default.
var limitOptions = []string{"max_queue_size", "max_queue_bytes", "snapshot_every"}

// ValidateOptionsJSON refuses what Validate cannot see once options are
// decoded: a limit given as 0. raw is the "options" object of a start
// request; empty or null is fine.
func ValidateOptionsJSON(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	var given map[string]json.RawMessage
	if err := json.Unmarshal(raw, &given); err != nil {
		return nil // the typed decode reports it
	}
	for _, name := range limitOptions {
		v, ok := given[name]
		if !ok {
			continue
		}
		var n json.Number
		if json.Unmarshal(v, &n) == nil {
			if f, err := n.Float64(); err == nil && f == 0 {
				return bus.Errorf(bus.ReasonInvalidRequest, "option %s: 0 is out of range; leave it out for the default", name)
			}
		}
	}
	return nil
}
