package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteHeader writes the machine and the settings a run measures with.
func WriteHeader(w io.Writer, m Machine, s Settings) {
	fmt.Fprintf(w, "machine: %s, %d cores, %s, %s\n", m.CPU, m.Cores, m.GoVersion, m.OS)
	fmt.Fprintf(w, "disk:    %s\n", m.Disk)
	fmt.Fprintf(w, "run:     %d B data per signal, %d msgs, %d calls, %d publishers, %d agents, %d fanout agents, window %d, at most %s per run, %d kills of a cluster node (lease %s); durable (fsync) commits\n",
		s.MsgSize, s.Msgs, s.Calls, s.Publishers, s.Agents, s.FanoutAgents, s.Window, s.Duration, s.Kills, s.ClusterLease)
}

// WriteTable writes r's results as a table (scenario, metric, value,
// baseline, ratio) followed by the targets and the notes.
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tVALUE\tBASELINE\tRATIO\t")
	var notes []string
	for _, res := range r.Results {
		if res.Error != "" {
			fmt.Fprintf(tw, "%s\tFAILED\t\t\t\t\n", res.Scenario)
			notes = append(notes, fmt.Sprintf("%s failed: %s", res.Scenario, res.Error))
			continue
		}
		for i, m := range res.Metrics {
			scenario := ""
			if i == 0 {
				scenario = res.Scenario
			}
			value := formatValue(m.Value) + " " + m.Unit
			if len(m.Compare) == 0 {
				fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\n", scenario, m.Name, value)
			}
			for j, c := range m.Compare {
				name := m.Name
				if j > 0 {
					scenario, name, value = "", "", ""
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%s\t\n", scenario, name, value, c.Against, formatValue(c.Baseline), formatRatio(c.Ratio))
			}
			if m.Note != "" {
				notes = append(notes, fmt.Sprintf("%s / %s: %s", res.Scenario, m.Name, m.Note))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\ntargets:")
		for _, t := range r.Targets {
			fmt.Fprintf(w, "  %s %s\n", statusMark(t.Status), t)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	var total time.Duration
	for _, res := range r.Results {
		total += res.Elapsed
	}
	_, err := fmt.Fprintf(w, "\n%d scenarios in %s; figures vary with whatever else runs on the machine.\n", len(r.Results), total.Round(100*time.Millisecond))
	return err
}

func statusMark(s string) string {
	switch s {
	case TargetPass:
		return "PASS"
	case TargetMiss:
		return "MISS"
	}
	return "----"
}

// formatValue writes v with thousands separators when large and three
// significant figures when small.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case math.Abs(v) >= 1000:
		return thousands(int64(math.Round(v)))
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func formatRatio(r float64) string {
	if r >= 10 {
		return strconv.FormatFloat(r, 'f', 0, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}
