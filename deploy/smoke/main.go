// Command smoke is `make compose-smoke`: it brings docker-compose.yml up
// under a compose project of its own, calls counter agents through the
// NATS CLI (run inside a NATS container, since the network is internal
// and publishes no port), kills a jido-bus container and a NATS container
// (the JetStream meta leader) while it keeps calling, starts the node
// again (it must become ready while that server is still away), then the
// server, and checks that every acknowledged call is in the log exactly
// once (read from JetStream's partition streams in cluster mode) and that
// each counter's state is the number of increments in its log. It tears
// the project down (volumes too) at the end, and exits 1 on any loss or a
// node that could not start, 2 when it could not run.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type config struct {
	compose  []string
	files    []string
	calls    int
	agents   int
	killNode string
	keep     bool
}

func main() {
	var cfg config
	var compose string
	flag.StringVar(&compose, "compose", "", "the compose command (default: docker compose if it runs, else docker-compose, Debian's v1 package)")
	flag.Func("f", "compose file (repeatable; default docker-compose.yml)", func(s string) error { cfg.files = append(cfg.files, s); return nil })
	flag.IntVar(&cfg.calls, "calls", 40, "calls in each phase: before the kills, during the outage, after the restarts")
	flag.IntVar(&cfg.agents, "agents", 4, "counter agents the calls go to, round robin (several partitions)")
	flag.StringVar(&cfg.killNode, "kill-node", "j1", "the jido-bus service to kill")
	flag.BoolVar(&cfg.keep, "keep", false, "leave the project up at the end (it prints how to tear it down)")
	flag.Parse()
	cfg.compose = strings.Fields(compose)
	if len(cfg.files) == 0 {
		cfg.files = []string{"docker-compose.yml"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, cfg))
}

// errLoss is a check that failed (an acknowledged call lost or doubled,
// or a node that could not start while the cluster held its quorum), as
// opposed to a smoke that could not run.
var errLoss = errors.New("the cluster failed a check")

func run(ctx context.Context, cfg config) int {
	compose, err := preflight(ctx, cfg.compose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compose-smoke:", err)
		return 2
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	c := Compose{Command: compose, Files: cfg.files, Project: "jidosmoke" + hex.EncodeToString(suffix[:])}
	s := &smoke{cfg: cfg, c: c, start: time.Now()}
	err = s.run(ctx)
	if cfg.keep {
		fmt.Printf("left up: %s down -v --remove-orphans\n", strings.Join(c.Command, " ")+" "+strings.Join(c.args()[len(c.Command)-1:], " "))
	} else {
		// A context of its own: the teardown runs after an interrupt too.
		down, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		if out, derr := c.Run(down, "down", "-v", "--remove-orphans", "--timeout", "5"); derr != nil {
			fmt.Fprintf(os.Stderr, "compose-smoke: tearing down %s: %v\n%s", c.Project, derr, out)
		}
		cancel()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "compose-smoke: interrupted (%v); nothing was checked\n", err)
		return 2
	case errors.Is(err, errLoss):
		fmt.Fprintln(os.Stderr, "compose-smoke: FAIL:", err)
		return 1
	case err != nil:
		fmt.Fprintln(os.Stderr, "compose-smoke: could not finish:", err)
		return 2
	}
	return 0
}

// preflight checks that a Docker engine answers and finds the compose
// command (the docker compose plugin, else Debian's docker-compose),
// and says what to do when either is missing.
func preflight(ctx context.Context, compose []string) ([]string, error) {
	if out, err := output(ctx, "docker", "info", "--format", "{{.ServerVersion}}"); err != nil {
		return nil, fmt.Errorf("no Docker engine answers (%s): start one as root (Debian: apt-get install docker.io docker-compose; dockerd >/tmp/dockerd.log 2>&1 &) or point DOCKER_HOST at one", firstLine(out, err))
	}
	candidates := [][]string{compose}
	if len(compose) == 0 {
		candidates = [][]string{{"docker", "compose"}, {"docker-compose"}}
	}
	var tried []string
	for _, c := range candidates {
		out, err := output(ctx, c[0], append(c[1:], "version")...)
		if err == nil {
			return c, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %s", strings.Join(c, " "), firstLine(out, err)))
	}
	return nil, fmt.Errorf("no compose command runs (%s): install Debian's docker-compose or the docker compose plugin, or name one with -compose", strings.Join(tried, "; "))
}

// firstLine is the first line a failed command printed, where docker
// says what went wrong (a usage text follows), else the error.
func firstLine(out string, err error) string {
	if l, _, _ := strings.Cut(strings.TrimSpace(out), "\n"); l != "" {
		return l
	}
	return err.Error()
}

type smoke struct {
	cfg    config
	c      Compose
	start  time.Time
	ledger Ledger
	nats   []string // the NATS services
	nodes  []string // the jido-bus services
	client string   // the NATS service whose container runs the CLI
}

func (s *smoke) say(format string, a ...any) {
	fmt.Printf("[%5.1fs] %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, a...))
}

func (s *smoke) run(ctx context.Context) error {
	out, err := s.c.Run(ctx, "config", "--services")
	if err != nil {
		return err
	}
	for _, svc := range strings.Fields(out) {
		if strings.HasPrefix(svc, "nats") {
			s.nats = append(s.nats, svc)
		} else {
			s.nodes = append(s.nodes, svc)
		}
	}
	if len(s.nats) < 3 || len(s.nodes) == 0 {
		return fmt.Errorf("the compose files define NATS services %v and jido-bus services %v: want 3 NATS servers and at least one node", s.nats, s.nodes)
	}
	all := append(append([]string{}, s.nats...), s.nodes...)

	s.say("project %s: up %v", s.c.Project, all)
	if out, err := s.c.Run(ctx, "up", "-d"); err != nil {
		return fmt.Errorf("up: %w\n%s", err, out)
	}
	if err := s.waitHealthy(ctx, 4*time.Minute, all...); err != nil {
		return err
	}
	leader, err := s.natsCluster(ctx, s.nats)
	if err != nil {
		return err
	}
	s.say("NATS: %d servers, JetStream meta leader %s, sync_interval always", len(s.nats), leader)
	for _, n := range s.nats {
		if n != leader {
			s.client = n
			break
		}
	}

	agents := make([]string, s.cfg.agents)
	for i := range agents {
		agents[i] = fmt.Sprintf("smoke-%d", i)
		if err := s.startAgent(ctx, agents[i]); err != nil {
			return err
		}
	}
	s.say("started counters %v", agents)

	n := 0
	phase := func(name string) {
		for range s.cfg.calls {
			if ctx.Err() != nil {
				return
			}
			s.call(ctx, name, agents[n%len(agents)], n)
			n++
		}
		s.say("phase %-7s acked %d, refused %d, no answer %d", name, s.ledger.Count(name, Acked), s.ledger.Count(name, Refused), s.ledger.Count(name, NoAnswer))
	}

	phase("before")
	for _, svc := range []string{s.cfg.killNode, leader} {
		id, err := s.c.Container(ctx, svc)
		if err != nil {
			return err
		}
		if out, err := output(ctx, "docker", "kill", id); err != nil {
			return fmt.Errorf("docker kill %s: %w\n%s", svc, err, out)
		}
		s.say("docker kill %s", svc)
	}
	phase("outage")
	// The node first, while the NATS server is still away: the cluster
	// holds its quorum without one server, so a node must be able to
	// start then (an operator restarts what crashed in any order).
	var unavailable []string
	if err := s.startService(ctx, s.cfg.killNode); err != nil {
		return err
	}
	if err := s.waitHealthy(ctx, 90*time.Second, s.cfg.killNode); err != nil {
		logs, _ := output(ctx, "docker", "logs", "--tail", "3", s.containerOrEmpty(ctx, s.cfg.killNode))
		unavailable = append(unavailable, fmt.Sprintf("%s did not become ready within 90s while %s was down (%v); its last lines:\n%s", s.cfg.killNode, leader, err, logs))
		s.say("UNAVAILABLE: %s not ready while %s is down", s.cfg.killNode, leader)
	}
	if err := s.startService(ctx, leader); err != nil {
		return err
	}
	if err := s.waitHealthy(ctx, 4*time.Minute, all...); err != nil {
		return err
	}
	if leader, err = s.natsCluster(ctx, s.nats); err != nil {
		return err
	}
	s.say("NATS: meta leader now %s", leader)
	phase("after")
	if ctx.Err() != nil {
		return ctx.Err()
	}

	streams, err := s.logStreams(ctx)
	if err != nil {
		return err
	}
	if len(streams) > 0 {
		s.say("reading the replicated log from JetStream: %d partition streams", len(streams))
	} else {
		s.say("no partition streams in JetStream (single-node mode): reading the log through jido.api.log.show")
	}
	logs := map[string]AgentLog{}
	for _, a := range agents {
		lg, err := s.agentLog(ctx, streams, a)
		if err != nil {
			return err
		}
		logs[a] = lg
	}
	bad := append(s.ledger.Check(logs), unavailable...)
	total := 0
	for _, lg := range logs {
		total += len(lg.Increments)
	}
	acked := s.ledger.Count("", Acked)
	s.say("%s: %d calls sent, %d acknowledged, %d refused, %d unanswered; %d increments in the log over %d counters; %d violations",
		time.Now().UTC().Format(time.RFC3339), len(s.ledger.Calls), acked, s.ledger.Count("", Refused), s.ledger.Count("", NoAnswer), total, len(agents), len(bad))
	for _, b := range bad {
		fmt.Println("  FAIL:", b)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d violations", errLoss, len(bad))
	}
	if acked == 0 {
		return errors.New("no call was acknowledged: nothing was checked")
	}
	s.say("PASS: every acknowledged call is in the log exactly once")
	return nil
}

// startService starts service's container again: a no-op when it runs.
func (s *smoke) startService(ctx context.Context, service string) error {
	id, err := s.c.Container(ctx, service)
	if err != nil {
		return err
	}
	if out, err := output(ctx, "docker", "start", id); err != nil {
		return fmt.Errorf("docker start %s: %w\n%s", service, err, out)
	}
	s.say("docker start %s", service)
	return nil
}

func (s *smoke) containerOrEmpty(ctx context.Context, service string) string {
	id, _ := s.c.Container(ctx, service)
	return id
}

func (s *smoke) waitHealthy(ctx context.Context, d time.Duration, services ...string) error {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := s.c.WaitHealthy(wctx, services...); err != nil {
		return err
	}
	s.say("healthy: %v", services)
	return nil
}

// natsCluster reads /jsz in each NATS container and returns the meta
// leader all of them agree on, after checking they fsync every write.
func (s *smoke) natsCluster(ctx context.Context, servers []string) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		leader, err := s.metaLeader(ctx, servers)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return leader, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *smoke) metaLeader(ctx context.Context, servers []string) (string, error) {
	leaders := map[string]bool{}
	for _, srv := range servers {
		out, err := s.c.Exec(ctx, srv, "probe", "-print", "http://127.0.0.1:8222/jsz")
		if err != nil {
			return "", err
		}
		var jsz struct {
			Config struct {
				SyncAlways bool `json:"sync_always"`
			} `json:"config"`
			Meta *struct {
				Leader      string `json:"leader"`
				ClusterSize int    `json:"cluster_size"`
			} `json:"meta_cluster"`
		}
		if err := json.Unmarshal(out, &jsz); err != nil {
			return "", fmt.Errorf("/jsz of %s: %w", srv, err)
		}
		if !jsz.Config.SyncAlways {
			return "", fmt.Errorf("%s: JetStream without sync_interval: always (deploy/nats.conf sets it)", srv)
		}
		if jsz.Meta == nil || jsz.Meta.Leader == "" || jsz.Meta.ClusterSize != len(servers) {
			return "", fmt.Errorf("%s: no meta leader or a cluster of other than %d: %s", srv, len(servers), out)
		}
		leaders[jsz.Meta.Leader] = true
	}
	if len(leaders) != 1 {
		return "", fmt.Errorf("the servers disagree on the meta leader: %v", leaders)
	}
	for l := range leaders {
		return l, nil
	}
	return "", nil
}

// cli runs the NATS CLI in the client container, against that container's
// own server over loopback: the client is never the server the smoke
// kills, and a killed container's name takes Docker's DNS seconds to
// fail, which a CLI given every server pays on each call that tries it
// first.
func (s *smoke) cli(ctx context.Context, args ...string) ([]byte, error) {
	return s.c.Exec(ctx, s.client, append([]string{"nats", "-s", "nats://127.0.0.1:4222", "--timeout", "5s"}, args...)...)
}

// request sends body to an API subject and decodes an ok:true reply into v.
func (s *smoke) request(ctx context.Context, subject, body string, v any) error {
	out, err := s.cli(ctx, "req", "--raw", subject, body)
	if err != nil {
		return err
	}
	var r struct {
		OK    bool `json:"ok"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("%s: %w: %s", subject, err, out)
	}
	if !r.OK {
		return fmt.Errorf("%s %s: %s", subject, body, out)
	}
	return json.Unmarshal(out, v)
}

func (s *smoke) startAgent(ctx context.Context, id string) error {
	var last error
	// The nodes may still be taking their partitions: retry a refusal a
	// little while.
	for range 30 {
		var r struct{}
		last = s.request(ctx, "jido.api.agent.start", fmt.Sprintf(`{"type":"counter","id":%q}`, id), &r)
		if last == nil || strings.Contains(last.Error(), "already_exists") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("start counter %s: %w", id, last)
}

// call sends one increment as a binary-mode CloudEvent with an id of its
// own, so that the log can be searched for it, and records the outcome.
func (s *smoke) call(ctx context.Context, phase, agent string, n int) {
	id := fmt.Sprintf("%s-%d", s.c.Project, n)
	out, err := s.cli(ctx, "req", "--raw",
		"-H", "ce-specversion:1.0", "-H", "ce-id:"+id, "-H", "ce-source:compose-smoke", "-H", "ce-type:counter.increment",
		"jido.agent."+agent+".counter.increment", `{"by":1}`)
	s.ledger.Record(id, agent, phase, out, err)
}

// agentLog reads agent's increments from the partition streams of
// JetStream when there are any, else through jido.api.log.show page by
// page, and its state through jido.api.agent.state.
func (s *smoke) agentLog(ctx context.Context, streams []string, agent string) (AgentLog, error) {
	var lg AgentLog
	from := int64(0)
	if len(streams) > 0 {
		ids, err := s.jsAgentIncrements(ctx, streams, agent)
		if err != nil {
			return lg, err
		}
		lg.Increments = ids
	}
	for len(streams) == 0 {
		var page struct {
			Entries []struct {
				Event struct {
					ID   string `json:"id"`
					Type string `json:"type"`
				} `json:"event"`
			} `json:"entries"`
			Next int64 `json:"next"`
			More bool  `json:"more"`
		}
		body := fmt.Sprintf(`{"stream":"agent/%s","from":%d,"limit":500}`, agent, from)
		if err := s.request(ctx, "jido.api.log.show", body, &page); err != nil {
			return lg, err
		}
		for _, e := range page.Entries {
			if e.Event.Type == "counter.increment" {
				lg.Increments = append(lg.Increments, e.Event.ID)
			}
		}
		if !page.More {
			break
		}
		from = page.Next
	}
	var st struct {
		State struct {
			Count int64 `json:"count"`
		} `json:"state"`
	}
	if err := s.request(ctx, "jido.api.agent.state", fmt.Sprintf(`{"id":%q}`, agent), &st); err != nil {
		return lg, err
	}
	lg.Count = st.State.Count
	return lg, nil
}
