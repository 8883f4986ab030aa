package node

import (
	"context"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// PingReply answers <prefix>.api.ping. Stats and the totals after it
// count from the node's start (they drop to zero when it restarts: compare
// ServerID and UptimeMS); Counts is now. `jido-bus top` polls it.
type PingReply struct {
	Version  string        `json:"version"`
	ServerID string        `json:"server_id,omitempty"`
	Uptime   string        `json:"uptime"`
	Agents   int           `json:"agents"`
	Stats    natsbus.Stats `json:"stats"`
	// UptimeMS is Uptime in milliseconds, for computing rates.
	UptimeMS int64 `json:"uptime_ms"`
	// Counts are the agents active and passive, and the signals and
	// directives waiting over all active agents.
	Counts runtime.Counts `json:"counts"`
	// Commits are decisions committed to the log (jido_commit_seconds'
	// count), Emitted the signals out (jido_signals_out_total), Directives
	// the directive executions and DirectivesFailed those that failed
	// (jido_directives_total).
	Commits          uint64 `json:"commits"`
	Emitted          uint64 `json:"emitted"`
	Directives       uint64 `json:"directives"`
	DirectivesFailed uint64 `json:"directives_failed"`
	// Ready and Checks are what /readyz reports: whether the node takes
	// work, and each check ("log", "recovery", "nats") "ok" or why not.
	Ready  bool              `json:"ready"`
	Checks map[string]string `json:"checks"`
	// Insecure: the embedded server listens on the network without
	// authentication (serve --insecure); Warning says so for a person.
	Insecure bool   `json:"insecure,omitempty"`
	Warning  string `json:"warning,omitempty"`
	// HTTP is the gateways' base URL (serve --http), when they are served.
	HTTP string `json:"http,omitempty"`
}

func (n *Node) ping(_ context.Context, req []byte) (any, error) {
	// Ping takes no fields; one it does not know is refused, as on
	// every verb.
	if err := natsbus.DecodeRequest(req, &struct{}{}); err != nil {
		return nil, err
	}
	// A node whose log failed answers, but not ok: it takes no input.
	if err := n.evlog.Failed(); err != nil {
		return nil, err
	}
	// total adds up the samples of c's series that keep accepts: a
	// handful of series, read without gathering the whole registry.
	ran, failed := n.metrics.runtime.Directives()
	up := time.Since(n.started)
	counts := n.rt.Counts()
	ready := n.health.check(n.evlog, n.conn.NC)
	reply := PingReply{
		Ready:            ready.Ready,
		Checks:           ready.Checks,
		Version:          n.cfg.Version,
		ServerID:         n.conn.NC.ConnectedServerId(),
		Uptime:           up.Round(time.Millisecond).String(),
		Agents:           counts.Active + counts.Passive,
		Stats:            n.bus.Stats(),
		UptimeMS:         up.Milliseconds(),
		Counts:           counts,
		Commits:          n.metrics.runtime.Commits(),
		Emitted:          n.metrics.emitted.Load(),
		Directives:       ran,
		DirectivesFailed: failed,
		HTTP:             n.HTTPURL(),
	}
	if n.conn.Insecure {
		reply.Insecure = true
		reply.Warning = insecureWarning
	}
	return reply, nil
}

// insecureWarning is ping's warning for a node started with --insecure.
const insecureWarning = "INSECURE: this node's NATS server accepts anyone on the network without authentication (--insecure); configure users (serve --config) and restart"
