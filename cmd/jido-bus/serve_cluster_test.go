package main

import (
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/node"
)

// TestServeClusterSettings: cluster mode's flags and keys, flags over the
// file, and the settings serve refuses with what to do.
func TestServeClusterSettings(t *testing.T) {
	urls := "nats://a:4222,nats://b:4222,nats://c:4222"
	file := writeConfig(t, "data_dir: /tmp/x\nnats_url: "+urls+"\ncluster:\n  enabled: true\n  node_id: f1\n  partitions: 32\n  lease_timeout: 3s\n  monitor: [\"http://a:8222\"]\n")
	cases := []struct {
		args    []string
		want    *node.ClusterConfig
		refused string
	}{
		{args: nil, want: nil},
		{args: []string{"--cluster", "--nats-url", urls, "--node-id", "n1"},
			want: &node.ClusterConfig{NodeID: "n1", Partitions: 64, Replicas: 3, LeaseTimeout: 6 * time.Second}},
		{args: []string{"--cluster", "--nats-url", urls, "--node-id", "n1", "--replicas", "1"},
			want: &node.ClusterConfig{NodeID: "n1", Partitions: 64, Replicas: 1, AllowFewerReplicas: true, LeaseTimeout: 6 * time.Second}},
		{args: []string{"--config", file},
			want: &node.ClusterConfig{NodeID: "f1", Partitions: 32, Replicas: 3, LeaseTimeout: 3 * time.Second, MonitorURLs: []string{"http://a:8222"}}},
		{args: []string{"--config", file, "--node-id", "n9", "--partitions", "8"},
			want: &node.ClusterConfig{NodeID: "n9", Partitions: 8, Replicas: 3, LeaseTimeout: 3 * time.Second, MonitorURLs: []string{"http://a:8222"}}},
		{args: []string{"--cluster"}, refused: "--nats-url"},
		{args: []string{"--node-id", "n1"}, refused: "add --cluster"},
		{args: []string{"--partitions", "8"}, refused: "add --cluster"},
		{args: []string{"--cluster", "--nats-url", urls, "--partitions", "0"}, refused: "1 to 1024"},
		{args: []string{"--cluster", "--nats-url", urls, "--replicas", "7"}, refused: "give 3"},
		{args: []string{"--cluster", "--nats-url", urls, "--lease-timeout", "100ms"}, refused: "at least 1s"},
		{args: []string{"--cluster", "--nats-url", urls, "--node-id", "a.b"}, refused: "--node-id"},
		{args: []string{"--cluster", "--nats-url", urls, "--open", "."}, refused: "not available in cluster mode"},
		{args: []string{"--nats-url", urls, "--emit-stream"}, refused: "leaves that server's streams alone"},
		{args: []string{"--cluster", "--nats-url", urls, "--node-id", "n1", "--emit-stream"},
			want: &node.ClusterConfig{NodeID: "n1", Partitions: 64, Replicas: 3, LeaseTimeout: 6 * time.Second}},
	}
	cfg, err := serveFlags(t, map[string]string{"NATS_URL": urls}, "--data-dir", "/tmp/x", "--cluster", "--node-id", "e1")
	if err != nil || cfg.natsURL != urls {
		t.Errorf("--cluster with $NATS_URL: %q, %v; want the variable's URLs", cfg.natsURL, err)
	}
	if cfg, err := serveFlags(t, map[string]string{"NATS_URL": urls}, "--data-dir", "/tmp/x"); err != nil || cfg.natsURL != "" {
		t.Errorf("a single node with $NATS_URL set: %q, %v; want the embedded server", cfg.natsURL, err)
	}
	for _, tc := range cases {
		cfg, err := serveFlags(t, nil, append([]string{"--data-dir", "/tmp/x"}, tc.args...)...)
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.refused)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		got := cfg.clusterConfig()
		switch {
		case got == nil && tc.want == nil:
		case got == nil || tc.want == nil:
			t.Errorf("%v: cluster config %+v, want %+v", tc.args, got, tc.want)
		case got.NodeID != tc.want.NodeID || got.Partitions != tc.want.Partitions || got.Replicas != tc.want.Replicas ||
			got.AllowFewerReplicas != tc.want.AllowFewerReplicas || got.LeaseTimeout != tc.want.LeaseTimeout ||
			strings.Join(got.MonitorURLs, ",") != strings.Join(tc.want.MonitorURLs, ","):
			t.Errorf("%v: cluster config %+v, want %+v", tc.args, *got, *tc.want)
		}
	}
}
