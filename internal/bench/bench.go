package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/cluster"
)

// Defaults of Config.
const (
	DefaultMsgSize      = 128
	DefaultMsgs         = 100_000
	DefaultCalls        = 10_000
	DefaultCallers      = 16
	DefaultPublishers   = 4
	DefaultAgents       = 1_000
	DefaultFanoutAgents = 10_000
	DefaultDuration     = 10 * time.Second
	DefaultWindow       = 16_384
	DefaultKills        = 10
	// DefaultClusterLease is the cluster scenario's lease timeout: the
	// one a node of `serve --cluster` runs with unless told otherwise.
	DefaultClusterLease = cluster.DefaultLeaseTimeout
)

// Config configures a run. DataDir is required; every other zero value
// means its default.
type Config struct {
	// DataDir is where the scenarios write: each one in DataDir/<name>,
	// which must not exist yet. It must be on a real disk: a tmpfs is
	// refused unless AllowTmpfs is set, because fsyncs there cost nothing
	// and every durable figure would be a fiction.
	DataDir    string
	AllowTmpfs bool
	// Scenarios names the scenarios to run, in any order (they run in the
	// order of Scenarios()); empty means all of them.
	Scenarios []string
	// MsgSize is the size of each signal's data in bytes: {"by":1} padded
	// with JSON whitespace, so the counter accepts it. At least 8.
	MsgSize int
	// Msgs is the number of signals (or messages) each throughput run sends.
	Msgs int
	// Calls is the number of calls each latency run makes, one at a time.
	Calls int
	// Callers is the number of concurrent callers, each with its own NATS
	// connection, of the call scenario's second latency run (Calls calls
	// in all, shared between them).
	Callers int
	// Publishers is the number of publishing goroutines, each with its own
	// NATS connection.
	Publishers int
	// Agents is the number of counter agents cast and replay spread over.
	Agents int
	// FanoutAgents is the number of counters one broadcast reaches.
	FanoutAgents int
	// Duration caps each measured run; a run stopped by it reports the rate
	// of what it finished and says so in its note.
	Duration time.Duration
	// Window bounds the signals published and not yet committed (or
	// received), so that no queue overflows and nothing is dropped.
	Window int
	// Kills is how many times the cluster scenario stops a node abruptly
	// to measure how long its partitions take to answer again.
	Kills int
	// ClusterLease is the lease timeout of the cluster scenario's nodes:
	// how long a silent node keeps its partitions.
	ClusterLease time.Duration
	// Progress, when set, is told what is being measured while it runs. It
	// is called from the run's goroutines, one call at a time.
	Progress func(Progress)
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MsgSize, DefaultMsgSize)
	def(&c.Msgs, DefaultMsgs)
	def(&c.Calls, DefaultCalls)
	def(&c.Callers, DefaultCallers)
	def(&c.Publishers, DefaultPublishers)
	def(&c.Agents, DefaultAgents)
	def(&c.FanoutAgents, DefaultFanoutAgents)
	def(&c.Window, DefaultWindow)
	def(&c.Kills, DefaultKills)
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.ClusterLease <= 0 {
		c.ClusterLease = DefaultClusterLease
	}
	return c
}

func (c Config) validate() error {
	if c.DataDir == "" {
		return errors.New("bench: a data directory is required (--data-dir)")
	}
	if c.MsgSize < len(minData) {
		return fmt.Errorf("bench: message size %d is below %d bytes, the size of the smallest counter signal %s; raise --msg-size", c.MsgSize, len(minData), minData)
	}
	return nil
}

// Progress says what a run is doing. A scenario starts with Step empty;
// then each measured step reports Done of Total now and then, and once
// with Finished; the scenario ends with Step empty and Finished.
type Progress struct {
	Scenario string
	Step     string
	Done     int64
	Total    int64
	Finished bool
	Err      error // set on a scenario's last report when it failed
}

// Scenario is one measurement: Run returns its metrics, or an error when
// it could not measure.
type Scenario struct {
	Name string
	// Doc says in one line what the scenario measures.
	Doc string
	Run func(ctx context.Context, env *Env) ([]Metric, error)
}

// Scenarios returns the built-in scenarios in the order they run.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "cast", Doc: "N publishers → M counters → durable commit, vs raw NATS pub/sub and raw Pebble synced batches", Run: runCast},
		{Name: "call", Doc: "request/reply latency with the durable commit, vs raw NATS request/reply and raw Pebble synced commits", Run: runCall},
		{Name: "fanout", Doc: "one broadcast to K counters until all K committed", Run: runFanout},
		{Name: "replay", Doc: "rebuilding M agents from the log (recovery), vs reading the same entries", Run: runReplay},
		{Name: "jetstream", Doc: "the same messages into a JetStream file stream, async and sync publish", Run: runJetStream},
		{Name: "cluster", Doc: "durable casts, call latency and failover through a 3-server NATS cluster, vs raw JetStream R3 sync_always publishes", Run: runCluster},
	}
}

// Metric is one figure of a scenario.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Count is how many operations the figure is made of.
	Count int64 `json:"count,omitempty"`
	// Compare holds the baselines the value is set against.
	Compare []Comparison `json:"compare,omitempty"`
	// Note qualifies the figure (a run stopped by --duration, a batch size).
	Note string `json:"note,omitempty"`
}

// Comparison sets a metric against a baseline: Ratio is Value/Baseline.
type Comparison struct {
	Against  string  `json:"against"`
	Baseline float64 `json:"baseline"`
	Ratio    float64 `json:"ratio"`
}

func (m *Metric) compare(against string, baseline float64) {
	if baseline <= 0 {
		return
	}
	m.Compare = append(m.Compare, Comparison{Against: against, Baseline: baseline, Ratio: m.Value / baseline})
}

// Result is the outcome of one scenario.
type Result struct {
	Scenario string        `json:"scenario"`
	Metrics  []Metric      `json:"metrics,omitempty"`
	Error    string        `json:"error,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// Metric returns the metric of r named name.
func (r Result) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Settings echo the configuration a report was measured with.
type Settings struct {
	DataDir      string        `json:"data_dir"`
	MsgSize      int           `json:"msg_size"`
	Msgs         int           `json:"msgs"`
	Calls        int           `json:"calls"`
	Callers      int           `json:"callers"`
	Publishers   int           `json:"publishers"`
	Agents       int           `json:"agents"`
	FanoutAgents int           `json:"fanout_agents"`
	Duration     time.Duration `json:"duration_ns"`
	Window       int           `json:"window"`
	Kills        int           `json:"kills"`
	ClusterLease time.Duration `json:"cluster_lease_ns"`
}

// Report is the outcome of a run.
type Report struct {
	Machine  Machine   `json:"machine"`
	Settings Settings  `json:"settings"`
	Started  time.Time `json:"started"`
	Results  []Result  `json:"results"`
	Targets  []Target  `json:"targets"`
}

// Result returns the result of scenario name.
func (r *Report) Result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Scenario == name {
			return res, true
		}
	}
	return Result{}, false
}

// Failed reports whether a scenario could not measure.
func (r *Report) Failed() bool {
	return slices.ContainsFunc(r.Results, func(res Result) bool { return res.Error != "" })
}

// Env is what a scenario runs with.
type Env struct {
	// Config is the run's configuration with its defaults applied.
	Config Config
	// Dir is the scenario's own directory, DataDir/<name>, created for it.
	Dir string

	scenario string
	report   *Report
	progress *progressSink
}

// Earlier returns the metric named metric of a scenario that ran before in
// this run.
func (e *Env) Earlier(scenario, metric string) (Metric, bool) {
	res, ok := e.report.Result(scenario)
	if !ok || res.Error != "" {
		return Metric{}, false
	}
	return res.Metric(metric)
}

// Run runs the scenarios cfg.Scenarios selects (all by default).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	all := Scenarios()
	if len(cfg.Scenarios) == 0 {
		return RunScenarios(ctx, cfg, all)
	}
	var chosen []Scenario
	for _, s := range all {
		if slices.Contains(cfg.Scenarios, s.Name) {
			chosen = append(chosen, s)
		}
	}
	for _, name := range cfg.Scenarios {
		if !slices.ContainsFunc(all, func(s Scenario) bool { return s.Name == name }) {
			return nil, fmt.Errorf("bench: unknown scenario %q; choose among %s", name, strings.Join(Names(), ", "))
		}
	}
	return RunScenarios(ctx, cfg, chosen)
}

// Names lists the built-in scenarios.
func Names() []string {
	var names []string
	for _, s := range Scenarios() {
		names = append(names, s.Name)
	}
	return names
}

// RunScenarios runs the given scenarios one after the other. A scenario
// that fails is reported in its Result and the next one still runs; the
// error is for a run that could not start (a bad configuration, a tmpfs,
// a data directory in use) or a ctx that ended.
func RunScenarios(ctx context.Context, cfg Config, scenarios []Scenario) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: create the data directory: %w", err)
	}
	machine := DescribeMachine(cfg.DataDir)
	if machine.Disk.Tmpfs && !cfg.AllowTmpfs {
		return nil, fmt.Errorf("bench: %w: %s is on %s (%s); fsyncs there cost nothing, so durable figures would be meaningless. Choose a directory on a disk with --data-dir, or pass --allow-tmpfs to measure anyway", ErrTmpfs, cfg.DataDir, machine.Disk.FSType, machine.Disk.MountPoint)
	}
	for _, s := range scenarios {
		dir := filepath.Join(cfg.DataDir, s.Name)
		if _, err := os.Stat(dir); err == nil {
			return nil, fmt.Errorf("bench: %s exists from an earlier run; remove it or choose another --data-dir", dir)
		}
	}
	report := &Report{
		Machine: machine,
		Started: time.Now().UTC(),
		Settings: Settings{
			DataDir: cfg.DataDir, MsgSize: cfg.MsgSize, Msgs: cfg.Msgs, Calls: cfg.Calls, Callers: cfg.Callers,
			Publishers: cfg.Publishers, Agents: cfg.Agents, FanoutAgents: cfg.FanoutAgents,
			Duration: cfg.Duration, Window: cfg.Window, Kills: cfg.Kills, ClusterLease: cfg.ClusterLease,
		},
	}
	sink := &progressSink{fn: cfg.Progress}
	for _, s := range scenarios {
		if err := ctx.Err(); err != nil {
			return report, fmt.Errorf("bench: stopped before %s: %w", s.Name, err)
		}
		res := runOne(ctx, cfg, s, report, sink)
		report.Results = append(report.Results, res)
	}
	report.Targets = EvaluateTargets(report)
	return report, ctx.Err()
}

func runOne(ctx context.Context, cfg Config, s Scenario, report *Report, sink *progressSink) Result {
	sink.send(Progress{Scenario: s.Name})
	start := time.Now()
	res := Result{Scenario: s.Name}
	dir := filepath.Join(cfg.DataDir, s.Name)
	var err error
	if err = os.MkdirAll(dir, 0o755); err == nil {
		env := &Env{Config: cfg, Dir: dir, scenario: s.Name, report: report, progress: sink}
		res.Metrics, err = s.Run(ctx, env)
	}
	if err != nil {
		res.Error = err.Error()
	}
	res.Elapsed = time.Since(start)
	sink.send(Progress{Scenario: s.Name, Finished: true, Err: err})
	return res
}

// ErrTmpfs is wrapped by the error of a run refused because its data
// directory is in memory.
var ErrTmpfs = errors.New("the data directory is on a tmpfs")
