package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Tool services: a program in any language offers tools to the node's
// projects over NATS. It publishes an announce on <prefix>.tools.announce
// (again within its ttl, or its tools go away), answers each call by
// request/reply on its own subject under <prefix>.tools.call., and may
// withdraw a tool at once on <prefix>.tools.withdraw. The node cannot
// check what a service's tool really does, so it takes no declared
// safety: every service tool counts as one that writes (its start is
// committed before the call is sent), and its name starts with svc_, so
// that a project's policy rules them all with one glob (svc_*: ask).
const (
	// ServiceToolPrefix starts every service tool's name.
	ServiceToolPrefix = "svc_"
	// maxAnnounce bounds an announce message; maxSchema each of its
	// schemas; maxToolReply a call's reply.
	maxAnnounce  = 256 << 10
	maxSchema    = 64 << 10
	maxToolReply = 1 << 20
	// defaultToolTTL is an announce's lifetime when it names none;
	// maxToolTTL the longest it may name.
	defaultToolTTL = 30 * time.Second
	maxToolTTL     = time.Hour
	// maxToolTimeout bounds the timeout an announce may ask for its calls.
	maxToolTimeout = 5 * time.Minute
	// maxServiceTools bounds the tools offered at once: each new one
	// rebuilds every open project's catalog.
	maxServiceTools = 256
)

// toolServicePermissions are RoleToolService's: announce, withdraw, hear
// calls on <prefix>.tools.call.<user>.>, answer them (for as long as a
// call may last, and a margin) and read the replies to its announces.
func toolServicePermissions(subjects bus.Subjects, user string) *natsserver.Permissions {
	p := subjects.Name()
	return &natsserver.Permissions{
		PublishAllow:   []string{p + ".tools.announce", p + ".tools.withdraw"},
		SubscribeAllow: []string{p + ".tools.call." + user + ".>", InboxPrefix(user) + ".>"},
		ResponsesFor:   maxToolTimeout + time.Minute,
	}
}

// ToolAnnounce is the body of <prefix>.tools.announce.
type ToolAnnounce struct {
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

// ToolWithdraw is the body of <prefix>.tools.withdraw: the tool and the
// subject that announced it.
type ToolWithdraw struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
}

// ToolRequest is what a service receives for one call; it answers with a
// ToolReply.
type ToolRequest struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
}

// ToolReply is a service's answer: Output, or Error (type and message).
type ToolReply struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  *tools.Error    `json:"error,omitempty"`
}

// toolServices keeps the tools services announced and their expiries.
type toolServices struct {
	n    *Node
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

func (n *Node) announceSubject() string { return n.subjects.Name() + ".tools.announce" }
func (n *Node) withdrawSubject() string { return n.subjects.Name() + ".tools.withdraw" }
func (n *Node) callPrefix() string      { return n.subjects.Name() + ".tools.call." }

// startToolServices subscribes to announces and withdrawals.
func (n *Node) startToolServices() error {
	ts := &toolServices{n: n, byID: map[string]*offer{}}
	for subj, h := range map[string]nats.MsgHandler{n.announceSubject(): ts.onAnnounce, n.withdrawSubject(): ts.onWithdraw} {
		sub, err := n.conn.nc.Subscribe(subj, h)
		if err != nil {
			ts.stop()
			return fmt.Errorf("subscribe to %s: %w", subj, err)
		}
		ts.subs = append(ts.subs, sub)
	}
	n.toolSvc = ts
	return nil
}

// stop unsubscribes and stops every expiry; the tools stay in the
// catalogs of projects that are closing anyway.
func (ts *toolServices) stop() {
	if ts == nil {
		return
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

func (ts *toolServices) onAnnounce(m *nats.Msg) {
	err := ts.announce(m.Data)
	if err != nil {
		ts.n.log.Warn("tool announce refused", "err", err)
	}
	respond(m, err)
}

func (ts *toolServices) onWithdraw(m *nats.Msg) {
	var w ToolWithdraw
	err := json.Unmarshal(m.Data, &w)
	if err == nil {
		err = ts.withdraw(w)
	}
	respond(m, err)
}

// announce checks a and adds or refreshes its tool.
func (ts *toolServices) announce(data []byte) error {
	if len(data) > maxAnnounce {
		return fmt.Errorf("announce of %d bytes: at most %d", len(data), maxAnnounce)
	}
	var a ToolAnnounce
	if err := json.Unmarshal(data, &a); err != nil {
		return fmt.Errorf("announce is not a JSON tool announce: %v", err)
	}
	if !strings.HasPrefix(a.Name, ServiceToolPrefix) {
		return fmt.Errorf("tool %q: a service tool's name starts with %s", a.Name, ServiceToolPrefix)
	}
	// The node sends calls with its own rights: a subject elsewhere (the
	// node's API, JetStream's) would make it a deputy of the announcer.
	if rest, ok := strings.CutPrefix(a.Subject, ts.n.callPrefix()); !ok || rest == "" || strings.ContainsAny(a.Subject, "*> \t\r\n") {
		return fmt.Errorf("tool %s: subject %q: calls go to a subject under %s (no wildcards)", a.Name, a.Subject, ts.n.callPrefix())
	}
	if len(a.InputSchema) > maxSchema || len(a.OutputSchema) > maxSchema {
		return fmt.Errorf("tool %s: a schema is at most %d bytes", a.Name, maxSchema)
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
	if old == nil && len(ts.byID) >= maxServiceTools {
		return fmt.Errorf("tool %s: %d service tools are offered already, the most a node takes; withdraw some", a.Name, maxServiceTools)
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
		ts.n.log.Info("service tool announced", "tool", a.Name, "subject", a.Subject, "ttl", ttl)
	}
	return nil
}

func (ts *toolServices) withdraw(w ToolWithdraw) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	o := ts.byID[w.Name]
	if o == nil || o.subject != w.Subject {
		return fmt.Errorf("no tool %s is offered on %q", w.Name, w.Subject)
	}
	o.timer.Stop()
	delete(ts.byID, w.Name)
	ts.n.log.Info("service tool withdrawn", "tool", w.Name)
	return ts.publishLocked()
}

// expire removes o unless a later announce replaced it.
func (ts *toolServices) expire(name string, o *offer) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	// A re-announce that raced the timer moved until and reset the timer.
	if ts.shut || ts.byID[name] != o || time.Now().Before(o.until) {
		return
	}
	delete(ts.byID, name)
	ts.n.log.Info("service tool expired: not announced again within its ttl", "tool", name)
	if err := ts.publishLocked(); err != nil {
		ts.n.log.Error("service tools not updated", "err", err)
	}
}

// publishLocked hands the current offers to the engine.
func (ts *toolServices) publishLocked() error {
	names := make([]string, 0, len(ts.byID))
	for n := range ts.byID {
		names = append(names, n)
	}
	sort.Strings(names)
	all := make([]projects.ServiceTool, 0, len(names))
	for _, n := range names {
		all = append(all, ts.byID[n].tool)
	}
	return ts.n.projects.SetServiceTools(all)
}

// tool is the catalog entry of a: its Func sends the call to a.Subject
// and waits for the reply within the call's timeout.
func (ts *toolServices) tool(a ToolAnnounce, timeout time.Duration) tools.Tool {
	desc := a.Description
	if a.Safety != nil {
		desc += fmt.Sprintf(" (the service declares reads=%t writes=%t runs=%t; not verified)", a.Safety.Reads, a.Safety.Writes, a.Safety.Runs)
	}
	nc, subject, name := ts.n.conn.nc, a.Subject, a.Name
	return tools.Tool{
		Name: a.Name, Description: desc,
		InputSchema: a.InputSchema, OutputSchema: a.OutputSchema,
		// Declared safety is not trusted: a tool that may write has its
		// start committed before it is sent.
		Safety:         tools.Safety{Reads: true, Writes: true},
		Timeout:        timeout,
		HonoursContext: true,
		Func: func(ctx context.Context, c *tools.Call) (any, error) {
			req, _ := json.Marshal(ToolRequest{CallID: c.ID, Tool: name, Args: c.Args})
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
			var r ToolReply
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
