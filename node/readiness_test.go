package node

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/projects"
)

// freeAddr returns a loopback HOST:PORT that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestNotReadyUntilTheControlPlaneAnswers: the start goes on after the
// agents are recovered — conversations resume, projects reopen (reading
// their files), then the control plane subscribes — and all that time
// /readyz must say 503 naming recovery: a balancer that believed a 200
// would send requests nothing answers yet. Once Start returns it is 200.
func TestNotReadyUntilTheControlPlaneAnswers(t *testing.T) {
	addr := freeAddr(t)
	entered, release := make(chan struct{}), make(chan struct{})
	started := make(chan *Node, 1)
	startErr := make(chan error, 1)
	go func() {
		n, err := Start(context.Background(), Config{
			DataDir: t.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"}, MetricsAddr: addr, NoSync: true,
			// Runs after the agents' recovery, before the control plane
			// subscribes: a project engine that takes long to come back.
			Projects: func(*projects.Config) { close(entered); <-release },
		})
		startErr <- err
		started <- n
	}()
	select {
	case <-entered:
	case err := <-startErr:
		t.Fatalf("Start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the start never reached the project engine")
	}
	code, body := getURL(t, "http://"+addr+"/readyz")
	close(release)
	if err := <-startErr; err != nil {
		t.Fatal(err)
	}
	n := <-started
	defer n.Shutdown(context.Background())
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"recovery"`) {
		t.Fatalf("/readyz while the node is still starting (the control plane not subscribed yet): %d %s, want 503 naming recovery", code, body)
	}
	if code, body := getURL(t, "http://"+addr+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz once started: %d %s, want 200", code, body)
	}
	if ready, checks := pingReady(t, n); !ready || checks["recovery"] != "ok" {
		t.Fatalf("ping once started: ready %v checks %v", ready, checks)
	}
}

func getURL(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestHealthEndpointsAnswerGETOnly: /healthz and /readyz are probes: GET
// and HEAD are answered, any other method is 405 naming the allowed ones
// (a POST is a mistake or a probe of what the listener does).
func TestHealthEndpointsAnswerGETOnly(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	base := "http://" + n.metrics.ln.Addr().String()
	for _, path := range []string{"/healthz", "/readyz"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, _ := http.NewRequest(method, base+path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s: %d, want 200", method, path, resp.StatusCode)
			}
		}
		for _, method := range []string{http.MethodPost, http.MethodDelete, http.MethodPut} {
			req, _ := http.NewRequest(method, base+path, strings.NewReader("x"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(resp.Header.Get("Allow"), "GET") {
				t.Errorf("%s %s: %d (Allow %q), want 405 allowing GET", method, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
	}
}
