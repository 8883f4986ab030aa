// Package toolservice lets a program in any language offer tools to the
// node's projects over NATS (the toolservice role). It publishes an
// announce on <prefix>.tools.announce (again within its ttl, or its tools
// go away), answers each call by request/reply on its own subject under
// <prefix>.tools.call., and may withdraw a tool at once on
// <prefix>.tools.withdraw. The node cannot check what a service's tool
// really does, so it takes no declared safety: every service tool counts
// as one that writes (its start is committed before the call is sent), and
// its name starts with svc_, so that a project's policy rules them all
// with one glob (svc_*: ask).
package toolservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
)

const (
	// NamePrefix starts every service tool's name.
	NamePrefix = "svc_"
	// MaxAnnounce bounds an announce message; MaxSchema each of its
	// schemas; maxToolReply a call's reply.
	MaxAnnounce  = 256 << 10
	MaxSchema    = 64 << 10
	maxToolReply = 1 << 20
	// defaultToolTTL is an announce's lifetime when it names none;
	// maxToolTTL the longest it may name.
	defaultToolTTL = 30 * time.Second
	maxToolTTL     = time.Hour
	// maxToolTimeout bounds the timeout an announce may ask for its calls.
	maxToolTimeout = 5 * time.Minute
	// MaxTools bounds the tools offered at once: each new one
	// rebuilds every open project's catalog.
	MaxTools = 256
)

// Permissions are natsserver.RoleToolService's: announce, withdraw, hear
// calls on <prefix>.tools.call.<user>.>, answer them (for as long as a
// call may last, and a margin) and read the replies to its announces.
func Permissions(subjects bus.Subjects, user string) *natsserver.Permissions {
	p := subjects.Name()
	return &natsserver.Permissions{
		PublishAllow:   []string{p + ".tools.announce", p + ".tools.withdraw"},
		SubscribeAllow: []string{p + ".tools.call." + user + ".>", natsserver.InboxPrefix(user) + ".>"},
		ResponsesFor:   maxToolTimeout + time.Minute,
	}
}

// Announce is the body of <prefix>.tools.announce.
type Announce struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Safety is what the service says the tool does; shown in the
	// description, never trusted (see above).
	Safety *tools.Safety `json:"safety,omitempty"`
	// Projects are the project ids served; empty or ["*"]: every project.
	Projects []string `json:"projects,omitempty"`
	// Subject is where calls go, under <prefix>.tools.call.
	Subject string `json:"subject"`
	// TTLSeconds is how long the announce holds (default 30, at most
	// 3600); TimeoutSeconds bounds one call (default the runner's).
	TTLSeconds     float64 `json:"ttl,omitempty"`
	TimeoutSeconds float64 `json:"timeout,omitempty"`
}

// Withdraw is the body of <prefix>.tools.withdraw: the tool and the
// subject that announced it.
type Withdraw struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
}

// Request is what a service receives for one call; it answers with a
// ToolReply.
type Request struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
}

// Reply is a service's answer: Output, or Error (type and message).
type Reply struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  *tools.Error    `json:"error,omitempty"`
}

// Config is what the services need of the node.
type Config struct {
	Conn     *nats.Conn
	Subjects bus.Subjects
	// Engine gets the tools offered, whenever they change.
	Engine interface {
		SetServiceTools([]projects.ServiceTool) error
	}
	Logger *slog.Logger
}

// Services keeps the tools services announced and their expiries.
type Services struct {
	cfg  Config
	mu   sync.Mutex
	byID map[string]*offer // by tool name
	subs []*nats.Subscription
	shut bool
}

type offer struct {
	tool    projects.ServiceTool
	subject string
	raw     string // the announce as received: a repeat only extends the ttl
	until   time.Time
	timer   *time.Timer
}

func (ts *Services) callPrefix() string { return ts.cfg.Subjects.Name() + ".tools.call." }

// Start subscribes to announces and withdrawals.
func Start(cfg Config) (*Services, error) {
	ts := &Services{cfg: cfg, byID: map[string]*offer{}}
	p := cfg.Subjects.Name()
	for subj, h := range map[string]nats.MsgHandler{p + ".tools.announce": ts.onAnnounce, p + ".tools.withdraw": ts.onWithdraw} {
		sub, err := cfg.Conn.Subscribe(subj, h)
		if err != nil {
			_ = ts.Close()
			return nil, fmt.Errorf("subscribe to %s: %w", subj, err)
		}
		ts.subs = append(ts.subs, sub)
	}
	return ts, nil
}

// Close unsubscribes and stops every expiry; the tools stay in the
// catalogs of projects that are closing anyway. A nil Services closes too.
func (ts *Services) Close() error {
	if ts == nil {
		return nil
	}
	for _, s := range ts.subs {
		_ = s.Unsubscribe()
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.shut = true
	for _, o := range ts.byID {
		o.timer.Stop()
	}
	return nil
}

func respond(m *nats.Msg, err error) {
	if m.Reply == "" {
		return
	}
	body := []byte(`{"ok":true}`)
	if err != nil {
		body, _ = json.Marshal(map[string]any{"ok": false, "error": map[string]string{"type": "invalid_request", "message": err.Error()}})
	}
	_ = m.Respond(body)
}

func (ts *Services) onAnnounce(m *nats.Msg) {
	err := ts.announce(m.Data)
	if err != nil {
		ts.cfg.Logger.Warn("tool announce refused", "err", err)
	}
	respond(m, err)
}

func (ts *Services) onWithdraw(m *nats.Msg) {
	var w Withdraw
	err := json.Unmarshal(m.Data, &w)
	if err == nil {
		err = ts.withdraw(w)
	}
	respond(m, err)
}

// announce checks a and adds or refreshes its tool.
func (ts *Services) announce(data []byte) error {
	if len(data) > MaxAnnounce {
		return fmt.Errorf("announce of %d bytes: at most %d", len(data), MaxAnnounce)
	}
	var a Announce
	if err := json.Unmarshal(data, &a); err != nil {
		return fmt.Errorf("announce is not a JSON tool announce: %v", err)
	}
	if !strings.HasPrefix(a.Name, NamePrefix) {
		return fmt.Errorf("tool %q: a service tool's name starts with %s", a.Name, NamePrefix)
	}
	// The node sends calls with its own rights: a subject elsewhere (the
	// node's API, JetStream's) would make it a deputy of the announcer.
	if rest, ok := strings.CutPrefix(a.Subject, ts.callPrefix()); !ok || rest == "" || strings.ContainsAny(a.Subject, "*> \t\r\n") {
		return fmt.Errorf("tool %s: subject %q: calls go to a subject under %s (no wildcards)", a.Name, a.Subject, ts.callPrefix())
	}
	if len(a.InputSchema) > MaxSchema || len(a.OutputSchema) > MaxSchema {
		return fmt.Errorf("tool %s: a schema is at most %d bytes", a.Name, MaxSchema)
	}
	ttl := time.Duration(a.TTLSeconds * float64(time.Second))
	switch {
	case a.TTLSeconds == 0:
		ttl = defaultToolTTL
	case ttl < time.Second || ttl > maxToolTTL:
		return fmt.Errorf("tool %s: ttl %gs: want 1 to %d seconds", a.Name, a.TTLSeconds, int(maxToolTTL/time.Second))
	}
	timeout := time.Duration(a.TimeoutSeconds * float64(time.Second))
	if timeout < 0 || timeout > maxToolTimeout {
		return fmt.Errorf("tool %s: timeout %gs: want at most %d seconds", a.Name, a.TimeoutSeconds, int(maxToolTimeout/time.Second))
	}
	st := projects.ServiceTool{Tool: ts.tool(a, timeout)}
	if !(len(a.Projects) == 0 || len(a.Projects) == 1 && a.Projects[0] == "*") {
		st.Projects = a.Projects
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.shut {
		return errors.New("the node is stopping")
	}
	old := ts.byID[a.Name]
	if old != nil && old.subject != a.Subject {
		return fmt.Errorf("tool %s is offered by the service on %s; withdraw it there first or pick another name", a.Name, old.subject)
	}
	if old == nil && len(ts.byID) >= MaxTools {
		return fmt.Errorf("tool %s: %d service tools are offered already, the most a node takes; withdraw some", a.Name, MaxTools)
	}
	if old != nil && old.raw == string(data) {
		// The service's regular re-announce: the catalogs stay as they are.
		old.until = time.Now().Add(ttl)
		old.timer.Reset(ttl)
		return nil
	}
	o := &offer{tool: st, subject: a.Subject, raw: string(data), until: time.Now().Add(ttl)}
	ts.byID[a.Name] = o
	if err := ts.publishLocked(); err != nil {
		if old != nil {
			ts.byID[a.Name] = old
		} else {
			delete(ts.byID, a.Name)
		}
		return err
	}
	if old != nil {
		old.timer.Stop()
	}
	o.timer = time.AfterFunc(ttl, func() { ts.expire(a.Name, o) })
	if old == nil {
		ts.cfg.Logger.Info("service tool announced", "tool", a.Name, "subject", a.Subject, "ttl", ttl)
	}
	return nil
}

func (ts *Services) withdraw(w Withdraw) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	o := ts.byID[w.Name]
	if o == nil || o.subject != w.Subject {
		return fmt.Errorf("no tool %s is offered on %q", w.Name, w.Subject)
	}
	o.timer.Stop()
	delete(ts.byID, w.Name)
	ts.cfg.Logger.Info("service tool withdrawn", "tool", w.Name)
	return ts.publishLocked()
}

// expire removes o unless a later announce replaced it.
func (ts *Services) expire(name string, o *offer) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	// A re-announce that raced the timer moved until and reset the timer.
	if ts.shut || ts.byID[name] != o || time.Now().Before(o.until) {
		return
	}
	delete(ts.byID, name)
	ts.cfg.Logger.Info("service tool expired: not announced again within its ttl", "tool", name)
	if err := ts.publishLocked(); err != nil {
		ts.cfg.Logger.Error("service tools not updated", "err", err)
	}
}

// publishLocked hands the current offers to the engine.
func (ts *Services) publishLocked() error {
	names := make([]string, 0, len(ts.byID))
	for n := range ts.byID {
		names = append(names, n)
	}
	sort.Strings(names)
	all := make([]projects.ServiceTool, 0, len(names))
	for _, n := range names {
		all = append(all, ts.byID[n].tool)
	}
	return ts.cfg.Engine.SetServiceTools(all)
}

// tool is the catalog entry of a: its Func sends the call to a.Subject
// and waits for the reply within the call's timeout.
func (ts *Services) tool(a Announce, timeout time.Duration) tools.Tool {
	desc := a.Description
	if a.Safety != nil {
		desc += fmt.Sprintf(" (the service declares reads=%t writes=%t runs=%t; not verified)", a.Safety.Reads, a.Safety.Writes, a.Safety.Runs)
	}
	nc, subject, name := ts.cfg.Conn, a.Subject, a.Name
	return tools.Tool{
		Name: a.Name, Description: desc,
		InputSchema: a.InputSchema, OutputSchema: a.OutputSchema,
		// Declared safety is not trusted: a tool that may write has its
		// start committed before it is sent.
		Safety:         tools.Safety{Reads: true, Writes: true},
		Timeout:        timeout,
		HonoursContext: true,
		Func: func(ctx context.Context, c *tools.Call) (any, error) {
			req, _ := json.Marshal(Request{CallID: c.ID, Tool: name, Args: c.Args})
			m, err := nc.RequestWithContext(ctx, subject, req)
			switch {
			case errors.Is(err, nats.ErrNoResponders):
				return nil, tools.Errorf(tools.ReasonUnavailable, "tool %s: no service answers on %s; start it, or wait for its tool to expire", name, subject)
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case err != nil:
				return nil, tools.Errorf(tools.ReasonUnavailable, "tool %s: request to %s: %v", name, subject, err)
			}
			if len(m.Data) > maxToolReply {
				return nil, tools.Errorf("too_large", "tool %s: the service's reply of %d bytes is over %d", name, len(m.Data), maxToolReply)
			}
			var r Reply
			if err := json.Unmarshal(m.Data, &r); err != nil {
				return nil, tools.Errorf(tools.ReasonToolFailed, "tool %s: the service's reply is not {\"output\":…} or {\"error\":…}: %v", name, err)
			}
			if r.Error != nil {
				if r.Error.Type == "" {
					r.Error.Type = tools.ReasonToolFailed
				}
				return nil, &tools.Error{Type: r.Error.Type, Message: r.Error.Message}
			}
			if len(r.Output) == 0 {
				return nil, tools.Errorf(tools.ReasonToolFailed, "tool %s: the service's reply has neither output nor error", name)
			}
			return r.Output, nil
		},
	}
}
