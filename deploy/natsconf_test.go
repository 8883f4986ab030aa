// Package deploy_test holds deploy/nats.conf and docker-compose.yml to
// what cluster mode needs of them, without Docker: the configuration is
// read by the pinned nats-server and run as a three-server cluster on
// loopback, and the compose file's shape is checked as data.
package deploy_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/nats-io/nats-server/v2/server"
)

func loadConf(t *testing.T) *server.Options {
	t.Helper()
	o, err := server.ProcessConfigFile("nats.conf")
	if err != nil {
		t.Fatalf("the pinned nats-server does not read deploy/nats.conf: %v", err)
	}
	return o
}

// TestNATSConfSettings: the settings cluster mode refuses to run without,
// and those the compose file relies on (the store on the volume at /data,
// monitoring where the nodes and the health check look, routes to the
// three services).
func TestNATSConfSettings(t *testing.T) {
	o := loadConf(t)
	var routes []string
	for _, r := range o.Routes {
		routes = append(routes, r.Host)
	}
	for _, c := range []struct {
		what    string
		got, ok any
		why     string
	}{
		{"jetstream", o.JetStream, true, "the log is JetStream"},
		{"sync_interval always", o.SyncAlways, true, "acknowledged writes survive a power loss (Jepsen 2025, nats-server#7564)"},
		{"store_dir", o.StoreDir, "/data", "the named volume is mounted there"},
		{"http", fmt.Sprintf("%s:%d", o.HTTPHost, o.HTTPPort), "0.0.0.0:8222", "the nodes read every server's /varz (--nats-monitor), the health check probes it inside the container"},
		{"client port", o.Port, 4222, "the nodes' --nats-url names it"},
		{"cluster", fmt.Sprintf("%s:%d", o.Cluster.Name, o.Cluster.Port), "jido:6222", "the routes name it"},
		{"routes", fmt.Sprint(routes), "[nats1:6222 nats2:6222 nats3:6222]", "one per NATS service of docker-compose.yml"},
		{"no_advertise", o.Cluster.NoAdvertise, true, "clients keep to the service names"},
		{"lame_duck_duration set", o.LameDuckDuration > 0, true, "rolling restarts move clients gently"},
	} {
		if c.got != c.ok {
			t.Errorf("%s = %v, want %v: %s", c.what, c.got, c.ok, c.why)
		}
	}
}

// TestNATSConfClusterSurvivesLosingLeader runs three servers with
// deploy/nats.conf (only names, addresses and store directories changed
// for loopback), checks the compose health check's URL answers 200 on
// each, stops the JetStream meta leader, and checks the two left elect
// another and are healthy again: what the compose smoke does with
// docker kill, here without Docker.
func TestNATSConfClusterSurvivesLosingLeader(t *testing.T) {
	c := jstest.StartCluster(t, 3, func(_ int, o *server.Options) {
		conf := loadConf(t)
		conf.ServerName, conf.Host, conf.Port = o.ServerName, o.Host, o.Port
		conf.HTTPHost, conf.HTTPPort = o.HTTPHost, o.HTTPPort
		conf.StoreDir = o.StoreDir
		conf.Cluster.Host, conf.Cluster.Port = o.Cluster.Host, o.Cluster.Port
		conf.Routes = o.Routes
		conf.NoLog, conf.NoSigs = true, true
		*o = *conf
	})
	healthy := func(i int) error {
		url := c.MonitorURLs()[i] + "/healthz?js-enabled-only=true"
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s %s", url, resp.Status, body)
		}
		return nil
	}
	leader := -1
	for i, s := range c.Servers {
		if !s.JetStreamConfig().SyncAlways {
			t.Errorf("%s runs without sync_interval: always", s.Name())
		}
		testkit.EventuallyNil(t, s.Name()+" healthy", func() error { return healthy(i) })
		if s.JetStreamIsLeader() {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("no meta leader")
	}
	c.Servers[leader].Shutdown()
	c.Servers[leader].WaitForShutdown()
	testkit.Eventually(t, "a new meta leader among the two left", func() bool {
		for i, s := range c.Servers {
			if i != leader && s.JetStreamIsLeader() {
				return true
			}
		}
		return false
	})
	for i, s := range c.Servers {
		if i != leader {
			testkit.EventuallyNil(t, s.Name()+" healthy without "+c.Servers[leader].Name(), func() error { return healthy(i) })
		}
	}
}
