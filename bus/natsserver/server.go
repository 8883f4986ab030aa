// Package natsserver runs a NATS server (nats-server/v2) inside the jido-bus
// process, with JetStream on, so that one binary is a whole node and tests
// need nothing running beforehand.
package natsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Defaults of Options.
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = 4222
	// RandomPort asks the operating system for a free port; tests use it.
	RandomPort = -1
	// readyTimeout bounds how long Start waits for the server to accept
	// clients.
	readyTimeout = 10 * time.Second
	// DefaultMaxPayload is the embedded server's max_payload: 8 MiB.
	DefaultMaxPayload = 8 << 20
)

// Options configure the embedded server. The zero value listens on
// 127.0.0.1:4222 with JetStream on, storing under a temporary directory
// chosen by nats-server, with no auth.
type Options struct {
	// Host and Port to listen on. Empty Host means DefaultHost; zero Port
	// means DefaultPort; RandomPort picks a free one (read it back with
	// Server.ClientURL).
	Host string
	Port int
	// DontListen serves in-process connections only (Server.Connect), no TCP.
	DontListen bool

	// User and Password, or Token, require clients to authenticate. Set
	// either a user and password or a token, not both. User and Password
	// are one more entry of Users, without restrictions.
	User     string
	Password string
	Token    string
	// Users are the clients' identities, each with its permissions. A
	// token excludes them. With users, Connect uses an in-process user of
	// its own that may do everything.
	Users []User
	// OnViolation, when set, hears of every publish the server refuses by
	// permission. It runs on the refused client's goroutine in the server:
	// blocking it slows that client only.
	OnViolation func(Violation)

	// TLSCert and TLSKey (PEM files) turn TLS on: clients must connect
	// with TLS (in-process connections need not). TLSCA is the CA bundle
	// client certificates are verified against; TLSVerify requires every
	// TCP client to present one it signed.
	TLSCert, TLSKey, TLSCA string
	TLSVerify              bool

	// NoJetStream turns JetStream off. It is on by default because users of
	// jido-bus may keep their own streams next to it.
	NoJetStream bool
	// StoreDir is where JetStream keeps its files, typically
	// <data-dir>/nats. Empty lets nats-server choose a temporary directory.
	StoreDir string
	// MaxPayload bounds a message's payload (headers included) in bytes;
	// zero means DefaultMaxPayload. Replies that could grow past it (lists)
	// read it from their connection and page.
	MaxPayload int32

	// ServerName names the server in monitoring and logs; empty lets
	// nats-server generate one.
	ServerName string

	// Logger receives the server's log lines; nil discards them. Debug and
	// trace lines are logged at slog.LevelDebug.
	Logger *slog.Logger
}

// Server is a running embedded NATS server. Its methods are safe for
// concurrent use.
type Server struct {
	ns               *server.Server
	opts             Options
	internalPassword string // of the in-process user, when there are users
}

// Start starts a server and waits until it accepts clients.
func Start(opts Options) (*Server, error) {
	if opts.Token != "" && (opts.User != "" || opts.Password != "") {
		return nil, errors.New("natsserver: set either a user and password or a token, not both")
	}
	if (opts.User == "") != (opts.Password == "") {
		return nil, errors.New("natsserver: a user needs a password and a password a user")
	}
	sopts := &server.Options{
		ServerName:    opts.ServerName,
		Host:          opts.Host,
		Port:          opts.Port,
		DontListen:    opts.DontListen,
		Authorization: opts.Token,
		JetStream:     !opts.NoJetStream,
		NoSigs:        true,
		NoLog:         opts.Logger == nil,
		MaxPayload:    opts.MaxPayload,
	}
	if sopts.MaxPayload == 0 {
		sopts.MaxPayload = DefaultMaxPayload
	}
	if sopts.Host == "" {
		sopts.Host = DefaultHost
	}
	if sopts.Port == 0 {
		sopts.Port = DefaultPort
	}
	if opts.StoreDir != "" {
		sopts.StoreDir = filepath.Clean(opts.StoreDir)
	}
	internalPassword, err := opts.users(sopts)
	if err != nil {
		return nil, err
	}
	if err := opts.tls(sopts); err != nil {
		return nil, err
	}
	if !sopts.DontListen && sopts.Port != RandomPort {
		// nats-server only logs a port it cannot bind and never becomes
		// ready; find out at once, with an error that says what to do.
		addr := net.JoinHostPort(sopts.Host, strconv.Itoa(sopts.Port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("natsserver: cannot listen on %s: %w (is another server using the port? choose another with --listen, or connect to it with --nats-url)", addr, err)
		}
		l.Close()
	}
	ns, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("natsserver: configure: %w", err)
	}
	if opts.Logger != nil || opts.OnViolation != nil {
		l := opts.Logger
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		ns.SetLoggerV2(slogAdapter{l: l, opts: &opts}, l.Enabled(context.Background(), slog.LevelDebug), false, false)
	}
	ns.Start()
	if !ns.ReadyForConnections(readyTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		if opts.DontListen {
			return nil, fmt.Errorf("natsserver: not ready after %s", readyTimeout)
		}
		addr := net.JoinHostPort(sopts.Host, strconv.Itoa(sopts.Port))
		return nil, fmt.Errorf("natsserver: could not listen on %s within %s (is another server using the port? choose one with --listen)", addr, readyTimeout)
	}
	return &Server{ns: ns, opts: opts, internalPassword: internalPassword}, nil
}

// tls configures TLS from the files opts names.
func (o *Options) tls(sopts *server.Options) error {
	if o.TLSCert == "" && o.TLSKey == "" && o.TLSCA == "" && !o.TLSVerify {
		return nil
	}
	if o.TLSCert == "" || o.TLSKey == "" {
		return errors.New("natsserver: TLS needs both a certificate and its key (tls: cert and key)")
	}
	if o.TLSVerify && o.TLSCA == "" {
		return errors.New("natsserver: verifying client certificates (TLS verify_clients) needs the CA that signs them (tls: ca)")
	}
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: o.TLSCert, KeyFile: o.TLSKey, CaFile: o.TLSCA, Verify: o.TLSVerify})
	if err != nil {
		return fmt.Errorf("natsserver: TLS: %w", err)
	}
	sopts.TLSConfig = cfg
	sopts.TLSVerify = o.TLSVerify
	sopts.TLSTimeout = 2 // seconds, nats-server's default
	return nil
}

// ClientURL returns the nats:// URL clients connect to.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// Addr returns the address the server listens on, or nil with DontListen.
func (s *Server) Addr() net.Addr { return s.ns.Addr() }

// ID returns the server's unique id.
func (s *Server) ID() string { return s.ns.ID() }

// Connect opens a client connection to the server in process, without TCP,
// with the server's credentials and the given options.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	all := []nats.Option{nats.InProcessServer(s.ns)}
	switch {
	case s.opts.Token != "":
		all = append(all, nats.Token(s.opts.Token))
	case s.internalPassword != "":
		all = append(all, nats.UserInfo(internalUser, s.internalPassword))
	}
	nc, err := nats.Connect("", append(all, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("natsserver: connect in process: %w", err)
	}
	return nc, nil
}

// Close stops the server and returns once it has stopped: clients are
// disconnected (close it after they have drained), and nothing is left
// to wait for. It returns nil: an io.Closer.
func (s *Server) Close() error {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	return nil
}
