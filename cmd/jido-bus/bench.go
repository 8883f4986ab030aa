package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jido-bus/jido-bus/cluster"
	"github.com/jido-bus/jido-bus/internal/bench"
)

// benchFlags are the flags of `jido-bus bench`.
type benchFlags struct {
	scenarios  string
	dataDir    string
	allowTmpfs bool
	json       bool
	cpuProfile string
	memProfile string
	cfg        bench.Config
}

// newBenchCmd is `jido-bus bench`: every scenario against its physical
// limit, in one process and one run.
func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [scenario...]",
		Short: "Measure a node against the limits of NATS and the disk",
		Long: `Measure a jido-bus node, started in this process on a real data directory
with durable (fsync) commits, against the physical limits it runs on, each
measured the same way in the same run:

  cast       N publishers (own NATS connections) → M counter agents → durable
             commit, in signals/s until every cast is committed; beside the
             same messages through raw NATS pub/sub (the transport limit) and
             the same bytes as raw Pebble synced batches the size of the
             runtime's commit groups (the disk limit), with the ratios.
  call       request/reply latency p50/p90/p99/p99.9 (HDR histogram) of calls
             to counters, answered after the commit, by one caller and by
             --callers at once; beside raw NATS request/reply to a trivial
             responder (by as many callers), and synced commits of a
             call's two entries to raw Pebble, one at a time.
  fanout     one broadcast on jido.signal.counter.increment to K counters:
             time until all K committed, and signals/s delivered.
  replay     rebuilding M agents from the log (the runtime's recovery, and a
             whole node start) in entries/s; beside reading the same entries
             without folding them.
  jetstream  the same messages into a JetStream file-storage stream (async
             with a window, and sync publish) on the node's server, and async
             on a second server with sync_always — the event store a user
             might otherwise pick.
  cluster    a 3-server NATS cluster (JetStream R3, sync_always) and 2 nodes in
             cluster mode, in this process: durable casts and call latency
             through it, beside raw JetStream R3 publishes of the log's own
             messages into streams set up as the log's (async with a window,
             and sync one at a time); then --kills times a node stops
             abruptly, and the time until its partitions answer again.

The table ends with the targets jido-bus aims at (durable cast ≥ 50% of raw Pebble
and ≥ 100,000 signals/s, call p99 ≤ 2 ms and, by one caller and by
--callers, ≤ raw NATS req p99 + raw Pebble sync p99 + 0.1 ms, replay ≥ 500,000 entries/s; in a
cluster, casts ≥ 0.35× raw R3 async publishes, call p99 ≤ 2× raw R3 sync
p99 + 1 ms, failover ≤ the lease + 5 s), each marked PASS or MISS. The header names the CPU, cores, Go version and the disk
of the data directory: the figures belong to that machine and to whatever
else ran on it at the time.

The data directory must be on a disk: a tmpfs makes fsyncs free and every
durable figure a fiction, so it is refused unless --allow-tmpfs is given.
Without --data-dir a fresh directory is made in the current directory (or
$TMPDIR when that is a tmpfs) and removed afterwards; a --data-dir given is
kept, one subdirectory per scenario, for 'jido-bus log --data-dir
<dir>/<scenario>/node'.`,
		Example: `  jido-bus bench
  jido-bus bench cluster
  jido-bus bench --scenarios cast,call --msgs 200000 --agents 2000
  jido-bus bench -o json > bench.json
  jido-bus bench --data-dir /mnt/ssd/bench --duration 30s`,
		Args:      cobra.ArbitraryArgs,
		ValidArgs: bench.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBenchCounts(cmd); err != nil {
				return err
			}
			if len(args) > 0 {
				if cmd.Flags().Changed("scenarios") {
					return errors.New("name the scenarios either as arguments or with --scenarios, not both")
				}
				f.scenarios = strings.Join(args, ",")
			}
			return runBench(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenarios, "scenarios", strings.Join(bench.Names(), ","), "scenarios to run, comma-separated")
	fl.IntVar(&f.cfg.MsgSize, "msg-size", bench.DefaultMsgSize, "bytes of data per signal ({\"by\":1} padded with JSON whitespace)")
	fl.IntVar(&f.cfg.Msgs, "msgs", bench.DefaultMsgs, "signals or messages per throughput run (cast, its baselines, replay, jetstream)")
	fl.IntVar(&f.cfg.Calls, "calls", bench.DefaultCalls, "calls per latency run, one at a time")
	fl.IntVar(&f.cfg.Callers, "callers", bench.DefaultCallers, "concurrent callers of the call scenario's second latency run, each with its own NATS connection")
	fl.IntVar(&f.cfg.Publishers, "publishers", bench.DefaultPublishers, "publishers, each with its own NATS connection")
	fl.IntVar(&f.cfg.Agents, "agents", bench.DefaultAgents, "counter agents cast and replay spread over")
	fl.IntVar(&f.cfg.FanoutAgents, "fanout-agents", bench.DefaultFanoutAgents, "counter agents one broadcast reaches")
	fl.DurationVar(&f.cfg.Duration, "duration", bench.DefaultDuration, "most time for each measured run; a run stopped by it reports what it finished")
	fl.IntVar(&f.cfg.Window, "window", bench.DefaultWindow, "most signals published and not yet committed (no queue overflows, nothing dropped)")
	fl.IntVar(&f.cfg.Kills, "kills", bench.DefaultKills, "times the cluster scenario stops a node abruptly to measure failover")
	fl.DurationVar(&f.cfg.ClusterLease, "lease-timeout", bench.DefaultClusterLease, "lease timeout of the cluster scenario's nodes (serve --lease-timeout)")
	fl.StringVar(&f.dataDir, "data-dir", "", "directory on a real disk to run in (default: a fresh directory here, removed afterwards)")
	fl.BoolVar(&f.allowTmpfs, "allow-tmpfs", false, "run even when the data directory is on a tmpfs (durable figures become meaningless)")
	addOutputFlags(cmd, &f.json)
	documentJSON(cmd, `the whole report as one indented object: the machine, the
settings, and each scenario's figures beside its limits and targets.`)
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fl.StringVar(&f.memProfile, "memprofile", "", "write the allocations of the whole run to this file (go tool pprof -sample_index=alloc_space)")
	return cmd
}

// benchCounts are the flags that count something: a run with none of
// them measures nothing, and a negative one is a typo.
var benchCounts = []string{"msg-size", "msgs", "calls", "callers", "publishers", "agents", "fanout-agents", "window", "kills"}

// checkBenchCounts refuses a count below 1 before anything runs.
func checkBenchCounts(cmd *cobra.Command) error {
	for _, name := range benchCounts {
		v, err := cmd.Flags().GetInt(name)
		if err != nil {
			return err
		}
		if v < 1 {
			return fmt.Errorf("--%s %d: want 1 or more", name, v)
		}
	}
	if d, _ := cmd.Flags().GetDuration("duration"); d <= 0 {
		return fmt.Errorf("--duration %s: want a positive duration such as 10s", d)
	}
	if d, _ := cmd.Flags().GetDuration("lease-timeout"); d < cluster.MinLeaseTimeout {
		return fmt.Errorf("--lease-timeout %s: want at least %s, the shortest lease a node accepts", d, cluster.MinLeaseTimeout)
	}
	return nil
}

func runBench(cmd *cobra.Command, f benchFlags) error {
	cfg := f.cfg
	cfg.AllowTmpfs = f.allowTmpfs
	for _, s := range strings.Split(f.scenarios, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Scenarios = append(cfg.Scenarios, s)
		}
	}
	dir, cleanup, err := benchDataDir(f.dataDir, f.allowTmpfs)
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.DataDir = dir

	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if !f.json {
		bench.WriteHeader(out, bench.DescribeMachine(dir), settingsOf(cfg))
		fmt.Fprintln(out)
	}
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return err
	}
	shown := newBenchProgress(errOut)
	cfg.Progress = shown.show
	report, err := bench.Run(cmd.Context(), cfg)
	shown.finish()
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if perr := writeMemProfile(f.memProfile); perr != nil && err == nil {
		err = perr
	}
	if report == nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(report); jerr != nil {
			return fmt.Errorf("write the report: %w", jerr)
		}
	} else if werr := bench.WriteTable(out, report); werr != nil {
		return fmt.Errorf("write the report: %w", werr)
	}
	if err != nil {
		return err
	}
	if report.Failed() {
		return exitError{code: 1, err: errors.New("some scenarios failed; see the notes above")}
	}
	return nil
}

// startCPUProfile profiles the process into path until the returned stop
// is called; an empty path profiles nothing.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start the CPU profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("write the CPU profile %s: %w", path, err)
		}
		return nil
	}, nil
}

// writeMemProfile writes the allocation profile of the run so far to
// path, when one is given. The runtime samples every allocation profile
// from the start of the process, so it covers the whole run.
func writeMemProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create the memory profile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("write the memory profile %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the memory profile %s: %w", path, err)
	}
	return nil
}

// settingsOf echoes cfg with its defaults, for the header.
func settingsOf(cfg bench.Config) bench.Settings {
	return bench.Settings{
		DataDir: cfg.DataDir, MsgSize: cfg.MsgSize, Msgs: cfg.Msgs, Calls: cfg.Calls,
		Publishers: cfg.Publishers, Agents: cfg.Agents, FanoutAgents: cfg.FanoutAgents,
		Duration: cfg.Duration, Window: cfg.Window, Kills: cfg.Kills, ClusterLease: cfg.ClusterLease,
	}
}

// benchDataDir returns the directory to run in. A directory given is used
// as is (bench refuses a tmpfs there itself); otherwise a fresh one is made
// in the current directory, or in $TMPDIR when the current directory is a
// tmpfs, and cleanup removes it.
func benchDataDir(given string, allowTmpfs bool) (string, func(), error) {
	if given != "" {
		return given, func() {}, nil
	}
	var tried []string
	for _, parent := range []string{".", os.TempDir()} {
		disk := bench.DescribeMachine(parent).Disk
		if disk.Tmpfs && !allowTmpfs {
			tried = append(tried, fmt.Sprintf("%s is on %s", disk.Path, disk.FSType))
			continue
		}
		dir, err := os.MkdirTemp(parent, "jido-bench-")
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = dir
		}
		return abs, func() { _ = os.RemoveAll(abs) }, nil
	}
	return "", nil, fmt.Errorf("no directory on a disk to run in (%s); choose one with --data-dir, or pass --allow-tmpfs: %w", strings.Join(tried, "; "), bench.ErrTmpfs)
}

// benchProgress shows a run's progress on w: a bar per measured step when w
// is a terminal, otherwise a line per scenario.
type benchProgress struct {
	w        io.Writer
	terminal bool
	bar      *progressbar.ProgressBar
	step     string
	started  time.Time
}

func newBenchProgress(w io.Writer) *benchProgress {
	p := &benchProgress{w: w}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.terminal = true
	}
	return p
}

func (p *benchProgress) show(pr bench.Progress) {
	switch {
	case pr.Step == "" && !pr.Finished:
		p.started = time.Now()
		if !p.terminal {
			fmt.Fprintf(p.w, "bench: %s …\n", pr.Scenario)
		}
	case pr.Step == "":
		p.finish()
		status := "done"
		if pr.Err != nil {
			status = "FAILED: " + pr.Err.Error()
		}
		fmt.Fprintf(p.w, "bench: %s %s in %s\n", pr.Scenario, status, time.Since(p.started).Round(100*time.Millisecond))
	case p.terminal:
		if p.bar == nil || p.step != pr.Scenario+"/"+pr.Step {
			p.finish()
			p.step = pr.Scenario + "/" + pr.Step
			p.bar = progressbar.NewOptions64(pr.Total,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(fmt.Sprintf("%-9s %s", pr.Scenario, pr.Step)),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish())
		}
		_ = p.bar.Set64(pr.Done)
		if pr.Finished {
			p.finish()
		}
	}
}

func (p *benchProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
