package node

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsserver"
)

// NATSConfig says where the node's NATS comes from: an embedded server
// listening on Listen (the default), or an existing server at URL.
type NATSConfig struct {
	// Listen is HOST:PORT for the embedded server; empty means
	// 127.0.0.1:4222, port 0 any free port.
	Listen string
	// URL, when set, connects to an existing server instead.
	URL string
	// User and Password, or Token: required of clients by the embedded
	// server, or given to the server at URL.
	User, Password, Token string
	// NoJetStream starts the embedded server without JetStream.
	NoJetStream bool
	// DontListen serves in-process connections only (benchmarks, tests).
	DontListen bool
}

type natsConn struct {
	nc  *nats.Conn
	srv *natsserver.Server // nil with an external server
	url string
}

func connect(cfg NATSConfig, storeDir string, log *slog.Logger) (*natsConn, error) {
	opts := []nats.Option{
		nats.Name("jido-bus node"),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Error("NATS async error", "subject", subject, "err", err)
		}),
	}
	if cfg.URL != "" {
		switch {
		case cfg.Token != "":
			opts = append(opts, nats.Token(cfg.Token))
		case cfg.User != "":
			opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
		}
		nc, err := nats.Connect(cfg.URL, append(opts, nats.MaxReconnects(-1))...)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w (is the server running? leave out --nats-url to start an embedded one)", cfg.URL, err)
		}
		return &natsConn{nc: nc, url: nc.ConnectedUrlRedacted()}, nil
	}
	listen := cfg.Listen
	if listen == "" {
		listen = net.JoinHostPort(natsserver.DefaultHost, strconv.Itoa(natsserver.DefaultPort))
	}
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: want HOST:PORT: %w", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("listen address %q: port must be 0..65535", listen)
	}
	if port == 0 {
		port = natsserver.RandomPort
	}
	srv, err := natsserver.Start(natsserver.Options{
		Host: host, Port: port, DontListen: cfg.DontListen,
		User: cfg.User, Password: cfg.Password, Token: cfg.Token,
		NoJetStream: cfg.NoJetStream, StoreDir: storeDir, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	nc, err := srv.Connect(opts...)
	if err != nil {
		srv.Shutdown()
		return nil, err
	}
	url := "in-process"
	if !cfg.DontListen {
		url = srv.ClientURL()
	}
	return &natsConn{nc: nc, srv: srv, url: url}, nil
}

// drain lets in-flight messages finish and flushes what was published,
// giving up after timeout.
func (c *natsConn) drain(timeout time.Duration) error {
	if c.nc.IsClosed() {
		return nil
	}
	closed := make(chan struct{})
	c.nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := c.nc.Drain(); err != nil {
		return err
	}
	select {
	case <-closed:
		return nil
	case <-time.After(timeout):
		c.nc.Close()
		return fmt.Errorf("not drained after %s; closed", timeout)
	}
}

func (c *natsConn) close() {
	c.nc.Close()
	if c.srv != nil {
		c.srv.Shutdown()
	}
}
