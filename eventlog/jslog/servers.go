package jslog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// ServerSettings is what CheckServers needs to know of one server, as its
// /varz reports it.
type ServerSettings struct {
	Name         string
	JetStream    bool
	SyncAlways   bool
	SyncInterval time.Duration
	// ClusterSize is the size of the JetStream meta group the server
	// belongs to (zero when it reports none).
	ClusterSize int
}

// varz is the part of nats-server's Varz (server.Varz) read here.
type varz struct {
	ServerName string `json:"server_name"`
	JetStream  struct {
		Config *struct {
			SyncInterval time.Duration `json:"sync_interval"`
			SyncAlways   bool          `json:"sync_always"`
		} `json:"config"`
		Meta *struct {
			ClusterSize int `json:"cluster_size"`
		} `json:"meta"`
	} `json:"jetstream"`
}

func (v varz) settings() ServerSettings {
	s := ServerSettings{Name: v.ServerName}
	if c := v.JetStream.Config; c != nil {
		s.JetStream, s.SyncAlways, s.SyncInterval = true, c.SyncAlways, c.SyncInterval
	}
	if m := v.JetStream.Meta; m != nil {
		s.ClusterSize = m.ClusterSize
	}
	return s
}

// FetchServerSettings reads /varz from each monitoring base URL
// ("http://host:8222").
func FetchServerSettings(ctx context.Context, monitorURLs []string) ([]ServerSettings, error) {
	out := make([]ServerSettings, 0, len(monitorURLs))
	for _, base := range monitorURLs {
		u := strings.TrimSuffix(base, "/") + "/varz"
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("read server settings from %s: %w", u, err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("read server settings from %s: %w (is the server's monitoring port, http_port, open to this node?)", u, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read server settings from %s: %w", u, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("read server settings from %s: %s", u, resp.Status)
		}
		var v varz
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, fmt.Errorf("read server settings from %s: %w", u, err)
		}
		out = append(out, v.settings())
	}
	return out, nil
}

// FetchServerSettingsSys asks every server of the cluster for its /varz
// over NATS ($SYS.REQ.SERVER.PING.VARZ), which needs a connection as a user
// of the system account. It returns once as many servers answered as the
// JetStream meta group has members, or an error when ctx ends before.
func FetchServerSettingsSys(ctx context.Context, nc *nats.Conn) ([]ServerSettings, error) {
	inbox := nc.NewRespInbox()
	ch := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return nil, fmt.Errorf("read server settings over $SYS: %w", err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$SYS.REQ.SERVER.PING.VARZ", inbox, nil); err != nil {
		return nil, fmt.Errorf("read server settings over $SYS: %w", err)
	}
	var out []ServerSettings
	want := 0
	for {
		select {
		case m := <-ch:
			var r struct {
				Data  varz            `json:"data"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(m.Data, &r); err != nil {
				return nil, fmt.Errorf("read server settings over $SYS: %w", err)
			}
			if len(r.Error) > 0 {
				return nil, fmt.Errorf("read server settings over $SYS: %s", r.Error)
			}
			s := r.Data.settings()
			out = append(out, s)
			// A server outside a cluster reports no meta group: it is
			// the whole.
			want = max(want, s.ClusterSize, 1)
			if len(out) >= want {
				return out, nil
			}
		case <-ctx.Done():
			if len(out) == 0 {
				return nil, fmt.Errorf("read server settings over $SYS: no server answered (%w); the connection must be a system account user", ctx.Err())
			}
			return nil, fmt.Errorf("read server settings over $SYS: %d of %d servers answered: %w", len(out), want, ctx.Err())
		}
	}
}

// CheckServers refuses servers that would acknowledge a write they may
// lose: JetStream off, or fsync not on every write. Each refusal is a
// *SettingError; all are reported.
func CheckServers(servers []ServerSettings) error {
	if len(servers) == 0 {
		return errors.New("check servers: no server settings to check")
	}
	var errs []error
	for _, s := range servers {
		where := "server " + s.Name
		if !s.JetStream {
			errs = append(errs, &SettingError{where, "jetstream", "disabled",
				"the log is kept by JetStream; enable it (jetstream { store_dir: … })"})
			continue
		}
		if !s.SyncAlways {
			errs = append(errs, &SettingError{where, "jetstream.sync_interval", durationSetting(s.SyncInterval),
				"the server acknowledges writes before they are fsynced, so a power loss on a quorum loses acknowledged entries (nats-server#7564); set jetstream { sync_interval: always }"})
		}
	}
	return errors.Join(errs...)
}
