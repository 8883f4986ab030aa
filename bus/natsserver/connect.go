package natsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/nats-io/nats.go"
)

// Setup says where a node's NATS comes from: an embedded server
// listening on Listen (the default), or an existing server at URL.
type Setup struct {
	// Listen is HOST:PORT for the embedded server; empty means
	// 127.0.0.1:4222, port 0 any free port.
	Listen string
	// URL, when set, connects to an existing server instead.
	URL string
	// User and Password, or Token: required of clients by the embedded
	// server, or given to the server at URL.
	User, Password, Token string
	// Users are the embedded server's clients, each with a role (see
	// RoleAdmin, RoleOperator, RoleClient). User and Password, when set,
	// are one more admin. A Token excludes users.
	Users []RoleUser
	// TLS: for the embedded server its certificate and key, and the CA
	// client certificates are verified against (VerifyClients requires
	// one of every client); for URL the node's client certificate and key
	// and the CA it trusts the server with.
	TLS TLSFiles
	// Insecure lets the embedded server listen on a non-loopback address
	// without authentication (protected mode refuses it otherwise); ping
	// then says so.
	Insecure bool
	// NoJetStream starts the embedded server without JetStream.
	NoJetStream bool
	// DontListen serves in-process connections only (benchmarks, tests).
	DontListen bool
}

// RoleUser is a user of the embedded server: a name, a bcrypt password
// hash or an nkey (public key), and a role.
type RoleUser struct {
	Name     string
	Password string // bcrypt hash
	NKey     string // public key, U…
	Role     string
}

// TLSFiles names PEM files; see Setup.TLS.
type TLSFiles struct {
	Cert, Key, CA string
	VerifyClients bool
}

// authenticated says whether clients of the embedded server must prove
// who they are: users, a token, or client certificates.
func (c Setup) authenticated() bool {
	return len(c.Users) > 0 || c.User != "" || c.Token != "" || c.TLS.VerifyClients
}

// sendsSecrets says whether some client proves who it is by sending a
// secret (a token or a password) rather than by an nkey's signature or a
// client certificate.
func (c Setup) sendsSecrets() bool {
	if c.Token != "" || c.User != "" {
		return true
	}
	for _, u := range c.Users {
		if u.Password != "" {
			return true
		}
	}
	return false
}

// RolesEnforced says whether the embedded server gives users roles: their
// replies then come on their inboxes only.
func (c Setup) RolesEnforced() bool { return c.URL == "" && len(c.Users) > 0 }

// Conn is a node's connection to its NATS, and the embedded server when
// there is one.
type Conn struct {
	NC     *nats.Conn
	Server *Server // nil with an external server
	URL    string
	// Insecure: the embedded server listens without authentication on a
	// non-loopback address, as the operator asked with Insecure.
	Insecure bool
}

// Connect connects to the server at cfg.URL, or starts the embedded one
// (its JetStream files in storeDir) and connects to it in process; perms
// gives each role's user its permissions, onViolation hears of what they
// were refused.
func Connect(cfg Setup, storeDir string, log *slog.Logger, perms func(role, user string) (*Permissions, error), onViolation func(Violation)) (*Conn, error) {
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
	if cfg.Password != "" && cfg.User == "" {
		// Without a name the password configures nobody: the embedded
		// server would take anyone, and an external one would get no
		// credentials.
		return nil, errors.New("a password without a user: name the user it belongs to (--user or JIDO_USER)")
	}
	if cfg.URL != "" {
		switch {
		case cfg.Token != "":
			opts = append(opts, nats.Token(cfg.Token))
		case cfg.User != "":
			opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
		}
		if cfg.TLS.Cert != "" || cfg.TLS.Key != "" {
			opts = append(opts, nats.ClientCert(cfg.TLS.Cert, cfg.TLS.Key))
		}
		if cfg.TLS.CA != "" {
			opts = append(opts, nats.RootCAs(cfg.TLS.CA))
		}
		nc, err := nats.Connect(cfg.URL, append(opts, nats.MaxReconnects(-1))...)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w (is the server running? does it want TLS (--tlsca CA, and --tlscert/--tlskey when it asks for a client certificate) or credentials (--user with JIDO_PASSWORD, or JIDO_TOKEN)? leave out --nats-url to start an embedded one)", cfg.URL, err)
		}
		return &Conn{NC: nc, URL: nc.ConnectedUrlRedacted()}, nil
	}
	listen := cfg.Listen
	if listen == "" {
		listen = net.JoinHostPort(DefaultHost, strconv.Itoa(DefaultPort))
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
		port = RandomPort
	}
	insecure := false
	if !cfg.DontListen && !cfg.authenticated() && !IsLoopback(host) {
		if !cfg.Insecure {
			return nil, fmt.Errorf("%w: refusing to listen on %s without authentication: anyone who reaches it could stop agents and rewrite the log. "+
				"Configure users (the users: section of serve --config FILE) or a secret in the environment (JIDO_TOKEN, or JIDO_PASSWORD for --user), "+
				"or listen on loopback (--listen 127.0.0.1:4222); --insecure listens anyway", ErrUnprotected, listen)
		}
		insecure = true
		log.Warn("INSECURE: the embedded NATS server listens without authentication on a non-loopback address (--insecure); anyone who reaches it may do everything", "listen", listen)
	}
	if !cfg.DontListen && !IsLoopback(host) && cfg.TLS.Cert == "" && cfg.sendsSecrets() {
		log.Warn("secrets travel in clear: the embedded NATS server listens on a non-loopback address without TLS, and clients send their token or password as they connect; configure tls (cert and key) or give users nkeys, whose challenge reveals nothing", "listen", listen)
	}
	users, err := serverUsers(cfg, perms)
	if err != nil {
		return nil, err
	}
	srv, err := Start(Options{
		Host: host, Port: port, DontListen: cfg.DontListen,
		Token: cfg.Token, Users: users, OnViolation: onViolation,
		TLSCert: cfg.TLS.Cert, TLSKey: cfg.TLS.Key, TLSCA: cfg.TLS.CA, TLSVerify: cfg.TLS.VerifyClients,
		NoJetStream: cfg.NoJetStream, StoreDir: storeDir, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	nc, err := srv.Connect(opts...)
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	url := "in-process"
	if !cfg.DontListen {
		url = srv.ClientURL()
	}
	return &Conn{NC: nc, Server: srv, URL: url, Insecure: insecure}, nil
}

// ErrUnprotected is the error of a start that would expose the embedded
// server on the network without authentication.
var ErrUnprotected = errors.New("protected mode")

// IsLoopback says whether host names only loopback addresses: "" (every
// interface), "0.0.0.0" and "::" do not; a name counts when every address
// it resolves to is loopback.
func IsLoopback(host string) bool {
	if host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	if host == "localhost" {
		return true
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// serverUsers turns the configured users into the embedded server's, each
// with its role's permissions; User and Password are an admin.
func serverUsers(cfg Setup, perms func(role, user string) (*Permissions, error)) ([]User, error) {
	var out []User
	if cfg.User != "" {
		out = append(out, User{Name: cfg.User, Password: cfg.Password})
	}
	for _, u := range cfg.Users {
		p, err := perms(u.Role, u.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, User{Name: u.Name, Password: u.Password, NKey: u.NKey, Permissions: p})
	}
	return out, nil
}

// Drain lets in-flight messages finish and flushes what was published,
// closing the connection when ctx ends first.
func (c *Conn) Drain(ctx context.Context) error {
	if c.NC.IsClosed() {
		return nil
	}
	closed := make(chan struct{})
	c.NC.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := c.NC.Drain(); err != nil {
		return err
	}
	select {
	case <-closed:
		return nil
	case <-ctx.Done():
		c.NC.Close()
		return fmt.Errorf("not drained in time (%w); closed", context.Cause(ctx))
	}
}

// Close closes the connection and stops the embedded server.
func (c *Conn) Close() error {
	c.NC.Close()
	if c.Server != nil {
		return c.Server.Close()
	}
	return nil
}
