package deploy_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Command     []string       `yaml:"command"`
		Volumes     []string       `yaml:"volumes"`
		Ports       []any          `yaml:"ports"`
		Networks    []string       `yaml:"networks"`
		Restart     string         `yaml:"restart"`
		ReadOnly    bool           `yaml:"read_only"`
		CapDrop     []string       `yaml:"cap_drop"`
		DependsOn   map[string]any `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
	Networks map[string]struct {
		Internal bool `yaml:"internal"`
	} `yaml:"networks"`
	Volumes map[string]any `yaml:"volumes"`
}

// flagValue returns the value after flag in argv, or "".
func flagValue(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

// TestComposeFile holds docker-compose.yml to its promises: nothing is
// published and no network reaches outside; every NATS service is one of
// nats.conf's routes under a stable --name with its store on a volume of
// its own and the JetStream health check; every jido-bus node runs in
// cluster mode against all three servers (and their monitoring, where
// it checks their settings) under a --node-id of its own,
// with its data dir on a volume of its own, a readiness health check, and
// a start that waits for healthy NATS servers; all of them restart, run
// read-only and without capabilities.
func TestComposeFile(t *testing.T) {
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(f.Networks) == 0 {
		t.Error("no network: the default one is not internal")
	}
	for name, n := range f.Networks {
		if !n.Internal {
			t.Errorf("network %s is not internal: the cluster would reach outside", name)
		}
	}
	var natsServices, nodes []string
	for name, s := range f.Services {
		if strings.HasPrefix(name, "nats") {
			natsServices = append(natsServices, name)
		} else {
			nodes = append(nodes, name)
		}
		if len(s.Ports) > 0 {
			t.Errorf("%s publishes ports %v: the NATS servers have no authentication, the network is the boundary", name, s.Ports)
		}
		if len(s.Networks) == 0 {
			t.Errorf("%s is on the default network, which is not internal", name)
		}
		if s.Restart == "" || s.Restart == "no" {
			t.Errorf("%s has no restart policy", name)
		}
		if !s.ReadOnly || !slices.Contains(s.CapDrop, "ALL") {
			t.Errorf("%s: read_only %v, cap_drop %v; want a read-only root and no capabilities", name, s.ReadOnly, s.CapDrop)
		}
		if s.Build.Context != "." || !strings.HasPrefix(s.Build.Dockerfile, "deploy/") {
			t.Errorf("%s is built from %s/%s, want . and a Dockerfile in deploy/ (.dockerignore lets only bin/compose and deploy/nats.conf through)", name, s.Build.Context, s.Build.Dockerfile)
		}
		if !slices.Contains(s.Volumes, name+":/data") {
			t.Errorf("%s: volumes %v, want %s:/data (a volume of its own)", name, s.Volumes, name)
		}
		if _, ok := f.Volumes[name]; !ok {
			t.Errorf("volume %s is not declared", name)
		}
	}
	slices.Sort(natsServices)
	var urls, monitors []string
	for _, n := range natsServices {
		urls = append(urls, "nats://"+n+":4222")
		monitors = append(monitors, "http://"+n+":8222")
	}

	var routes []string
	for _, r := range loadConf(t).Routes {
		routes = append(routes, r.Hostname())
	}
	if !slices.Equal(natsServices, routes) {
		t.Errorf("NATS services %v, but nats.conf routes to %v", natsServices, routes)
	}
	for _, name := range natsServices {
		s := f.Services[name]
		if got := flagValue(s.Command, "--name"); got != name {
			t.Errorf("%s: --name %q, want the service's name: JetStream knows its peers by a name that survives restarts", name, got)
		}
		if !slices.Contains(s.Healthcheck.Test, "http://127.0.0.1:8222/healthz?js-enabled-only=true") {
			t.Errorf("%s: health check %v, want the probe on /healthz?js-enabled-only=true", name, s.Healthcheck.Test)
		}
	}

	if len(nodes) < 2 {
		t.Errorf("jido-bus nodes %v: want two or more, so that one can take over", nodes)
	}
	ids := map[string]string{}
	for _, name := range nodes {
		s := f.Services[name]
		if !slices.Contains(s.Command, "--cluster") {
			t.Errorf("%s: %v is not cluster mode", name, s.Command)
		}
		id := flagValue(s.Command, "--node-id")
		if other, dup := ids[id]; dup || id == "" {
			t.Errorf("%s: --node-id %q (also %s): each node needs an id of its own", name, id, other)
		}
		ids[id] = name
		if got := flagValue(s.Command, "--nats-url"); got != strings.Join(urls, ",") {
			t.Errorf("%s: --nats-url %s, want every NATS server: %s", name, got, strings.Join(urls, ","))
		}
		if got := flagValue(s.Command, "--nats-monitor"); got != strings.Join(monitors, ",") {
			t.Errorf("%s: --nats-monitor %s, want every NATS server's: %s (how the node checks sync_interval always without a system account)", name, got, strings.Join(monitors, ","))
		}
		if got := flagValue(s.Command, "--data-dir"); got != "/data" {
			t.Errorf("%s: --data-dir %q, want /data, its volume", name, got)
		}
		metrics := flagValue(s.Command, "--metrics")
		if !slices.Contains(s.Healthcheck.Test, "http://"+metrics+"/readyz") {
			t.Errorf("%s: health check %v, want the probe on /readyz of --metrics %s", name, s.Healthcheck.Test, metrics)
		}
		for _, n := range natsServices {
			if dep, ok := s.DependsOn[n].(map[string]any); !ok || dep["condition"] != "service_healthy" {
				t.Errorf("%s: depends_on %s = %v, want condition service_healthy", name, n, s.DependsOn[n])
			}
		}
	}
}
