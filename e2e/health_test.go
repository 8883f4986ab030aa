package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// metricsBase returns http://HOST:PORT of the node's metrics listener, as
// its log announced it (it was started with --metrics 127.0.0.1:0).
func metricsBase(t *testing.T, node *Node) string {
	t.Helper()
	for line := range strings.SplitSeq(node.Logs(), "\n") {
		var rec struct {
			Msg string `json:"msg"`
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "metrics" && rec.URL != "" {
			return strings.TrimSuffix(rec.URL, "/metrics")
		}
	}
	t.Fatalf("the node logged no metrics URL:\n%s", node.Logs())
	return ""
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestHealthThroughTheBinary: `serve --metrics` answers /healthz and
// /readyz with 200 once started, exports jido_build_info and the refusal
// counters at zero for every reason, and ping reports the node ready with
// each check.
func TestHealthThroughTheBinary(t *testing.T) {
	node := StartNode(t, tools, t.TempDir(), "--metrics", "127.0.0.1:0")
	base := metricsBase(t, node)
	if code, body := httpGet(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	code, body := httpGet(t, base+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, `"ready":true`) {
		t.Fatalf("/readyz: %d %s, want 200 ready", code, body)
	}
	_, metrics := httpGet(t, base+"/metrics")
	for _, want := range []string{
		`jido_build_info{commit="`,
		`log_format="` + strconv.Itoa(eventlog.FormatVersion) + `"`,
		`jido_signals_refused_total{reason="forbidden"} 0`,
		`jido_signals_refused_total{reason="queue_overflow"} 0`,
		`jido_signals_refused_total{reason="unavailable"} 0`,
		`jido_dead_letters_total{reason="invalid_request"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if !strings.Contains(metrics, "jido_build_info{") || !strings.Contains(metrics, "} 1\n") {
		t.Errorf("/metrics: jido_build_info is not 1")
	}
	ping := reply(t, node.NATS(t, "req", "--raw", "jido.api.ping", ""))
	checks, _ := ping["checks"].(map[string]any)
	if ping["ok"] != true || ping["ready"] != true || checks["log"] != "ok" || checks["recovery"] != "ok" || checks["nats"] != "ok" {
		t.Fatalf("ping = %v, want ready with log, recovery and nats ok", ping)
	}

	// A refusal of the control plane is counted under its reason.
	refused := reply(t, node.NATS(t, "req", "--raw", "jido.api.log.show", `{"strem":"dlq"}`))
	if errorType(refused) != bus.ReasonInvalidRequest {
		t.Fatalf("log.show with an unknown field: %v, want %s", refused, bus.ReasonInvalidRequest)
	}
	_, metrics = httpGet(t, base+"/metrics")
	if !strings.Contains(metrics, `jido_signals_refused_total{reason="invalid_request"} 1`) {
		t.Fatalf("the refused request is not counted:\n%s", grepLines(metrics, "jido_signals_refused_total"))
	}
}

// TestNotReadyWithoutNATS: a node on an external NATS server (--nats-url)
// that goes away stays alive (/healthz 200) but answers /readyz 503 with
// a body that names nats, so a balancer or an orchestrator stops sending
// it work until NATS is back.
func TestNotReadyWithoutNATS(t *testing.T) {
	srv := natstest.RunServer(t)
	node := StartNode(t, tools, t.TempDir(), "--nats-url", srv.ClientURL(), "--metrics", "127.0.0.1:0")
	base := metricsBase(t, node)
	if code, body := httpGet(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with NATS up: %d %s", code, body)
	}
	_ = srv.Close()
	var code int
	var body string
	testkit.Eventually(t, "/readyz to say NATS is gone", func() bool {
		code, body = httpGet(t, base+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	var r struct {
		Ready   bool              `json:"ready"`
		Checks  map[string]string `json:"checks"`
		Failing []string          `json:"failing"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("/readyz body %q: %v", body, err)
	}
	if r.Ready || len(r.Failing) != 1 || r.Failing[0] != "nats" || r.Checks["log"] != "ok" || !strings.Contains(r.Checks["nats"], "not connected") {
		t.Fatalf("/readyz %d %s, want not ready naming nats alone", code, body)
	}
	if code, body := httpGet(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz without NATS: %d %s", code, body)
	}
}

func grepLines(s, substr string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
