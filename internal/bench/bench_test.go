package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// tinyConfig runs every scenario with counts small enough for a test. The
// tests never look at how fast anything was, only at what was measured.
func tinyConfig(t *testing.T) Config {
	return Config{
		DataDir:      filepath.Join(t.TempDir(), "bench"),
		AllowTmpfs:   true, // the figures are not what a test checks
		MsgSize:      64,
		Msgs:         300,
		Calls:        20,
		Publishers:   2,
		Agents:       10,
		FanoutAgents: 20,
		Duration:     20 * time.Second,
		Window:       64,
		Kills:        1,
		// Short enough to keep the test quick, long enough that a node
		// renewing every half second on a busy machine keeps its lease.
		ClusterLease: 2 * time.Second,
	}
}

func TestRunEveryScenario(t *testing.T) {
	cfg := tinyConfig(t)
	var mu sync.Mutex
	var events []Progress
	cfg.Progress = func(p Progress) {
		mu.Lock()
		events = append(events, p)
		mu.Unlock()
	}
	report, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := len(report.Results), len(Scenarios()); got != want {
		t.Fatalf("%d results, want %d", got, want)
	}
	for _, res := range report.Results {
		if res.Error != "" {
			t.Errorf("%s failed: %s", res.Scenario, res.Error)
			continue
		}
		if len(res.Metrics) == 0 {
			t.Errorf("%s measured nothing", res.Scenario)
		}
		for _, m := range res.Metrics {
			if !(m.Value > 0) || math.IsInf(m.Value, 0) || m.Unit == "" {
				t.Errorf("%s / %s = %v %q, want a positive finite value with a unit", res.Scenario, m.Name, m.Value, m.Unit)
			}
			for _, c := range m.Compare {
				if !(c.Baseline > 0) || math.Abs(c.Ratio-m.Value/c.Baseline) > 1e-9 {
					t.Errorf("%s / %s against %s: baseline %v ratio %v", res.Scenario, m.Name, c.Against, c.Baseline, c.Ratio)
				}
			}
		}
	}

	// Every cast was committed, every call answered, every counter of the
	// fanout reached.
	want := map[string]map[string]int64{
		"cast":   {MetricCast: int64(cfg.Msgs), MetricCastEmitStream: int64(cfg.Msgs), MetricRawNATS: int64(cfg.Msgs), MetricRawPebble: int64(cfg.Msgs)},
		"call":   {MetricCallP99: int64(cfg.Calls), MetricRawReqPrefix + "p99": int64(cfg.Calls), MetricRawSyncPrefix + "p99": int64(cfg.Calls)},
		"fanout": {MetricFanout: int64(cfg.FanoutAgents * fanoutRounds)},
		"cluster": {MetricClusterCast: int64(cfg.Msgs), MetricR3Async: int64(cfg.Msgs), MetricClusterCallP99: int64(cfg.Calls),
			MetricR3SyncPrefix + "p99": int64(cfg.Calls), MetricFailoverMax: int64(cfg.Kills)},
	}
	for scenario, metrics := range want {
		res, _ := report.Result(scenario)
		for name, count := range metrics {
			m, ok := res.Metric(name)
			if !ok {
				t.Errorf("%s has no metric %q", scenario, name)
				continue
			}
			if m.Count != count {
				t.Errorf("%s / %s counted %d, want %d", scenario, name, m.Count, count)
			}
		}
	}
	cast, _ := report.Result("cast")
	if m, _ := cast.Metric(MetricCast); len(m.Compare) != 2 {
		t.Errorf("durable cast compares with %v, want raw NATS and raw Pebble", m.Compare)
	}
	if m, _ := cast.Metric(MetricCastEmitStream); len(m.Compare) != 1 {
		t.Errorf("durable cast with the emit stream compares with %v, want the node without", m.Compare)
	}
	call, _ := report.Result("call")
	for metric, transport := range map[string]string{MetricCallP99: MetricRawReqPrefix + "p99", MetricCallConcP99: MetricRawReqConcPrefix + "p99"} {
		m, _ := call.Metric(metric)
		if len(m.Compare) != 3 || m.Compare[2].Against != baselineCallGoal {
			t.Errorf("%s compares with %v, want raw NATS request/reply, raw Pebble synced commits and the goal", metric, m.Compare)
			continue
		}
		rawReq, _ := call.Metric(transport)
		rawSync, _ := call.Metric(MetricRawSyncPrefix + "p99")
		if want := rawReq.Value + rawSync.Value + callGoalSlackMS; math.Abs(m.Compare[2].Baseline-want) > 1e-9 {
			t.Errorf("%s: the goal is %v ms, want %s %v + raw Pebble sync p99 %v + 0.1", metric, m.Compare[2].Baseline, transport, rawReq.Value, rawSync.Value)
		}
	}
	if m, _ := call.Metric(MetricCallConcPrefix + "rate"); m.Count != int64(cfg.Calls) {
		t.Errorf("the concurrent callers made %d calls, want %d", m.Count, cfg.Calls)
	}
	replay, _ := report.Result("replay")
	if m, _ := replay.Metric(MetricRecovery); m.Count < int64(2*cfg.Msgs) {
		t.Errorf("recovery folded %d entries, want at least a signal and a cmd record for each of %d signals", m.Count, cfg.Msgs)
	}
	if _, cpuOK := processCPU(); cpuOK {
		m, _ := replay.Metric(MetricRecoveryCPU)
		if read, _ := replay.Metric(MetricReadOnlyCPU); len(m.Compare) != 1 || m.Compare[0].Against != baselineReadOnlyCPU || read.Value <= 0 {
			t.Errorf("recovery CPU %+v, read CPU %+v: want each per entry, recovery's beside the read's", m, read)
		}
	}
	js, _ := report.Result("jetstream")
	if m, _ := js.Metric(MetricJSAsync); len(m.Compare) != 1 || m.Compare[0].Against != baselineCast {
		t.Errorf("JetStream async compares with %v, want the durable cast", m.Compare)
	}

	cl, _ := report.Result("cluster")
	clusterCompares := map[string][]string{
		MetricClusterCast:    {baselineR3Async, baselineSingleNode},
		MetricClusterCallP99: {baselineR3Sync, baselineCallBudget, baselineSingleNode},
		MetricFailoverMax:    {baselineFailoverGoal},
	}
	for name, want := range clusterCompares {
		m, _ := cl.Metric(name)
		var got []string
		for _, c := range m.Compare {
			got = append(got, c.Against)
		}
		if !slices.Equal(got, want) {
			t.Errorf("cluster / %s compares with %v, want %v", name, got, want)
		}
	}
	if m, _ := cl.Metric(MetricClusterCallP99); len(m.Compare) == 3 {
		if rawP99, _ := cl.Metric(MetricR3SyncPrefix + "p99"); math.Abs(m.Compare[1].Baseline-(2*rawP99.Value+1)) > 1e-9 {
			t.Errorf("the call budget is %v ms, want 2 × raw R3 sync p99 %v + 1", m.Compare[1].Baseline, rawP99.Value)
		}
	}
	if m, _ := cl.Metric(MetricFailoverMax); len(m.Compare) == 1 && m.Compare[0].Baseline != (cfg.ClusterLease+failoverAllowance).Seconds() {
		t.Errorf("failover is set against %v s, want the lease %s + 5 s", m.Compare[0].Baseline, cfg.ClusterLease)
	}

	if len(report.Targets) != len(targetSpecs) {
		t.Fatalf("%d targets, want %d", len(report.Targets), len(targetSpecs))
	}
	for _, tg := range report.Targets {
		if tg.Status != TargetPass && tg.Status != TargetMiss {
			t.Errorf("target %s: status %q, want pass or miss", tg.Name, tg.Status)
		}
	}
	if report.Machine.Cores <= 0 || report.Machine.GoVersion == "" || report.Machine.Disk.Path == "" {
		t.Errorf("machine not described: %+v", report.Machine)
	}

	// Each scenario announced itself and its end, with its steps between.
	for _, s := range Scenarios() {
		var begun, ended, steps bool
		for _, e := range events {
			if e.Scenario != s.Name {
				continue
			}
			switch {
			case e.Step == "" && !e.Finished:
				begun = true
			case e.Step == "":
				ended = true
			default:
				steps = true
			}
		}
		if !begun || !ended || !steps {
			t.Errorf("progress of %s: begun %v, steps %v, ended %v", s.Name, begun, steps, ended)
		}
	}

	var table bytes.Buffer
	if err := WriteTable(&table, report); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(Names(), "targets", MetricCast, "raw Pebble", "call p99.9") {
		if !strings.Contains(table.String(), s) {
			t.Errorf("the table does not mention %q:\n%s", s, table.String())
		}
	}
	var back Report
	data, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != len(report.Results) || len(back.Targets) != len(report.Targets) {
		t.Errorf("the JSON report lost results or targets: %s", data)
	}
}

func TestBrokenScenarioIsReported(t *testing.T) {
	cfg := tinyConfig(t)
	broken := Scenario{Name: "broken", Run: func(context.Context, *Env) ([]Metric, error) {
		return nil, errors.New("the disk is on fire")
	}}
	fine := Scenario{Name: "fine", Run: func(_ context.Context, env *Env) ([]Metric, error) {
		if _, err := os.Stat(env.Dir); err != nil {
			return nil, err
		}
		return []Metric{{Name: "ok", Value: 1, Unit: "x"}}, nil
	}}
	report, err := RunScenarios(t.Context(), cfg, []Scenario{broken, fine})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := report.Result("broken"); !strings.Contains(res.Error, "on fire") {
		t.Errorf("broken scenario reported %q", res.Error)
	}
	if res, _ := report.Result("fine"); res.Error != "" || len(res.Metrics) != 1 {
		t.Errorf("the scenario after a broken one: %+v", res)
	}
	if !report.Failed() {
		t.Error("Failed() is false with a broken scenario")
	}
	for _, tg := range report.Targets {
		if tg.Status != TargetNotRun {
			t.Errorf("target %s is %q without its scenario", tg.Name, tg.Status)
		}
	}
	var table bytes.Buffer
	if err := WriteTable(&table, report); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "FAILED") || !strings.Contains(table.String(), "on fire") {
		t.Errorf("the table hides the failure:\n%s", table.String())
	}
}

// A real scenario that cannot finish says why: here a run cancelled while
// the cast scenario starts its counters.
func TestCancelledScenarioFails(t *testing.T) {
	cfg := tinyConfig(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg.Progress = func(p Progress) {
		if p.Step != "" {
			cancel()
		}
	}
	report, err := RunScenarios(ctx, cfg, Scenarios()[:1])
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if report == nil {
		t.Fatal("no report")
	}
	res, ok := report.Result("cast")
	if !ok || !strings.Contains(res.Error, "canceled") {
		t.Errorf("cast result %+v, want an error saying it was cancelled", res)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bench")
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no data dir", Config{}, "data directory is required"},
		{"unknown scenario", Config{DataDir: dir, Scenarios: []string{"cast", "warp"}}, `unknown scenario "warp"`},
		{"message too small", Config{DataDir: dir, MsgSize: 4}, "below 8 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(t.Context(), c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
}

func TestDataDirOfAnEarlierRunIsRefused(t *testing.T) {
	cfg := tinyConfig(t)
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "cast"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Scenarios = []string{"cast"}
	if _, err := Run(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "exists from an earlier run") {
		t.Errorf("err = %v, want a refusal of the used directory", err)
	}
}

func TestTmpfsIsRefused(t *testing.T) {
	dir := "/dev/shm"
	if d := describeDisk(dir); !d.Tmpfs {
		t.Skipf("%s is not a tmpfs here (%s)", dir, d.FSType)
	}
	sub, err := os.MkdirTemp(dir, "jido-bench-test-")
	if err != nil {
		t.Skipf("cannot write to %s: %v", dir, err)
	}
	defer os.RemoveAll(sub)
	_, err = Run(t.Context(), Config{DataDir: sub})
	if !errors.Is(err, ErrTmpfs) || !strings.Contains(err.Error(), "--allow-tmpfs") {
		t.Errorf("err = %v, want ErrTmpfs naming --allow-tmpfs", err)
	}
}

func TestMountOf(t *testing.T) {
	mounts := `/dev/vda / ext4 rw,relatime 0 0
tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0
/dev/vdb /data xfs rw 0 0
tmpfs /data/ram\040disk tmpfs rw 0 0
`
	cases := []struct{ path, device, fs, mp string }{
		{"/home/x", "/dev/vda", "ext4", "/"},
		{"/dev/shm/bench", "tmpfs", "tmpfs", "/dev/shm"},
		{"/data", "/dev/vdb", "xfs", "/data"},
		{"/database", "/dev/vda", "ext4", "/"},
		{"/data/ram disk/x", "tmpfs", "tmpfs", "/data/ram disk"},
	}
	for _, c := range cases {
		dev, fs, mp := mountOf(mounts, c.path)
		if dev != c.device || fs != c.fs || mp != c.mp {
			t.Errorf("mountOf(%q) = %q %q %q, want %q %q %q", c.path, dev, fs, mp, c.device, c.fs, c.mp)
		}
	}
}

func TestCounterData(t *testing.T) {
	for _, size := range []int{8, 9, 64, 128, 4096} {
		data := counterData(size)
		var v struct{ By int }
		if len(data) != size || json.Unmarshal(data, &v) != nil || v.By != 1 {
			t.Errorf("counterData(%d) = %q (%d bytes)", size, data, len(data))
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {2, "2"}, {0.6143, "0.614"}, {12.07, "12.1"}, {999.4, "999"},
		{1000, "1,000"}, {123456.7, "123,457"}, {-2500, "-2,500"},
	}
	for _, c := range cases {
		if got := formatValue(c.v); got != c.want {
			t.Errorf("formatValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestTargets(t *testing.T) {
	r := &Report{Results: []Result{
		{Scenario: "cast", Metrics: []Metric{{Name: MetricCast, Value: 120_000, Compare: []Comparison{{Against: baselineRawPebble, Baseline: 300_000, Ratio: 0.4}}}}},
		{Scenario: "call", Metrics: []Metric{{Name: MetricCallP99, Value: 1.5}}},
		{Scenario: "replay", Error: "broken"},
	}}
	got := map[string]string{}
	for _, tg := range EvaluateTargets(r) {
		got[tg.Name] = tg.Status
	}
	want := map[string]string{
		"durable cast vs raw Pebble": TargetMiss,
		"durable cast throughput":    TargetPass,
		"call p99":                   TargetPass,
		"replay (recovery)":          TargetNotRun,
	}
	for name, status := range want {
		if got[name] != status {
			t.Errorf("target %s: %q, want %q", name, got[name], status)
		}
	}
	if !slices.Equal(Names(), []string{"cast", "call", "fanout", "replay", "jetstream", "cluster"}) {
		t.Errorf("Names() = %v", Names())
	}
}
