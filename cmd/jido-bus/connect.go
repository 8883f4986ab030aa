package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/node"
)

// connHelp is the part of a client command's help that says where its
// connection settings come from; the root command's help carries it too.
const connHelp = `Connection: each setting comes from, first to last, its flag, its
environment variable, the NATS CLI context (--context NAME, else
$NATS_CONTEXT, else the one 'nats context select' chose:
$XDG_CONFIG_HOME/nats/context/NAME.json, by default under ~/.config), and
the default (nats://127.0.0.1:4222, no credentials). The variables are the
NATS CLI's: NATS_URL, NATS_USER, NATS_PASSWORD, NATS_TOKEN, NATS_CREDS,
NATS_NKEY, NATS_CERT, NATS_KEY, NATS_CA. Prefer the variables (or a
context, or a creds file) for secrets: a password or token given as a flag
is visible to every user of the machine in 'ps'.`

// connFlags are the flags of every command that talks to a running node:
// where the NATS server is, who to be there, the subject prefix and how
// long to wait. register binds them; connect resolves them against the
// environment and the NATS CLI's saved contexts.
type connFlags struct {
	natsURL  string
	user     string
	password string
	token    string
	creds    string
	nkey     string
	tlsCert  string
	tlsKey   string
	tlsCA    string
	context  string
	inbox    string
	prefix   string
	timeout  time.Duration

	flags   *pflag.FlagSet
	denials *natsbus.Denials // set by connect, for requester
	url     string           // the URL connect used, for messages
	// onAuthError, when set (a follower), is told when the server
	// refuses the credentials after a reconnect.
	onAuthError func(error)
}

func (f *connFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	f.flags = fs
	fs.StringVarP(&f.natsURL, "server", "s", "", "NATS server of the running node, nats://host:port[,…] (env NATS_URL; default "+nats.DefaultURL+")")
	fs.StringVar(&f.natsURL, "nats-url", "", "alias of --server")
	fs.StringVar(&f.user, "user", "", "user to connect as (env NATS_USER)")
	fs.StringVar(&f.password, "password", "", "that user's password (prefer env NATS_PASSWORD: flags show in ps)")
	fs.StringVar(&f.token, "token", "", "token to connect with (prefer env NATS_TOKEN: flags show in ps)")
	fs.StringVar(&f.creds, "creds", "", "user credentials file, JWT and seed (env NATS_CREDS)")
	fs.StringVar(&f.nkey, "nkey", "", "user NKey seed file (env NATS_NKEY)")
	fs.StringVar(&f.tlsCert, "tlscert", "", "TLS client certificate file (env NATS_CERT)")
	fs.StringVar(&f.tlsKey, "tlskey", "", "TLS client key file (env NATS_KEY)")
	fs.StringVar(&f.tlsCA, "tlsca", "", "TLS certificate authority file to verify the server (env NATS_CA)")
	fs.StringVar(&f.context, "context", "", "NATS CLI context to take settings from (env NATS_CONTEXT; default the selected one)")
	fs.StringVar(&f.inbox, "inbox-prefix", "", "prefix of this connection's reply subjects (default _INBOX_<user> for a named user, whose role may read that inbox only; _INBOX otherwise)")
	fs.StringVar(&f.prefix, "prefix", bus.DefaultPrefix, "subject prefix the node serves under")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "how long to wait for each answer from the node")
}

// connSettings are the resolved connection settings; from names where each
// non-empty one came from, for error messages.
type connSettings struct {
	url, user, password, token, creds, nkey, cert, key, ca string
	inboxPrefix                                            string
	tlsFirst                                               bool
	from                                                   map[string]string
	// context is the NATS context used ("" for none) and contextFrom how
	// it was chosen: --context, NATS_CONTEXT or the selected NATS context.
	context, contextFrom string
}

// resolve applies the precedence flag > environment > context > default
// to every setting.
func (f *connFlags) resolve() (connSettings, error) {
	s := connSettings{from: map[string]string{}}
	ctxName, ctxFrom := f.context, "--context"
	if !f.changed("context") {
		ctxName, ctxFrom = os.Getenv("NATS_CONTEXT"), "NATS_CONTEXT"
	}
	if ctxName == "" {
		ctxName, ctxFrom = selectedNATSContext(), "the selected NATS context"
	}
	var nctx natsContext
	if ctxName != "" {
		var err error
		if nctx, err = loadNATSContext(ctxName); err != nil {
			return s, fmt.Errorf("%s %q: %w", ctxFrom, ctxName, err)
		}
		s.context, s.contextFrom = ctxName, ctxFrom
	}
	ctxLabel := "context " + ctxName
	pick := func(key string, dst *string, flag []string, env, fromCtx, def string) {
		for _, name := range flag {
			if f.changed(name) {
				*dst, s.from[key] = f.flags.Lookup(name).Value.String(), "--"+name
				return
			}
		}
		if v := os.Getenv(env); v != "" {
			*dst, s.from[key] = v, env
			return
		}
		if fromCtx != "" {
			*dst, s.from[key] = fromCtx, ctxLabel
			return
		}
		*dst = def
	}
	pick("url", &s.url, []string{"server", "nats-url"}, "NATS_URL", nctx.URL, nats.DefaultURL)
	if strings.Trim(s.url, ", \t") == "" {
		// A script's unset variable (-s "$SERVER"): not the default
		// server, which may be another node.
		return s, fmt.Errorf("-s/--server (from %s) names no server: give nats://host:port", s.from["url"])
	}
	pick("user", &s.user, []string{"user"}, "NATS_USER", nctx.User, "")
	pick("password", &s.password, []string{"password"}, "NATS_PASSWORD", nctx.Password, "")
	pick("token", &s.token, []string{"token"}, "NATS_TOKEN", nctx.Token, "")
	pick("creds", &s.creds, []string{"creds"}, "NATS_CREDS", nctx.Creds, "")
	pick("nkey", &s.nkey, []string{"nkey"}, "NATS_NKEY", nctx.NKey, "")
	pick("cert", &s.cert, []string{"tlscert"}, "NATS_CERT", nctx.Cert, "")
	pick("key", &s.key, []string{"tlskey"}, "NATS_KEY", nctx.Key, "")
	pick("ca", &s.ca, []string{"tlsca"}, "NATS_CA", nctx.CA, "")
	s.inboxPrefix, s.tlsFirst = nctx.InboxPrefix, nctx.TLSFirst

	// Who one is comes from the highest level that says it: a --token
	// overrides a context's user. Two ways at one level cannot both be
	// meant.
	ids := map[string]*string{"user": &s.user, "token": &s.token, "creds": &s.creds, "nkey": &s.nkey}
	top := len(levels)
	for k := range ids {
		if l, ok := s.level(k); ok && l < top {
			top = l
		}
	}
	var ways []string
	for _, k := range []string{"user", "token", "creds", "nkey"} {
		l, ok := s.level(k)
		switch {
		case !ok:
		case l == top:
			ways = append(ways, fmt.Sprintf("%s (from %s)", k, s.from[k]))
		default:
			*ids[k] = ""
			delete(s.from, k)
		}
	}
	if len(ways) > 1 {
		return s, fmt.Errorf("conflicting credentials: %s; give one", strings.Join(ways, ", "))
	}
	if s.user == "" {
		if l, ok := s.level("password"); ok && l < 2 && len(ways) == 0 {
			return s, fmt.Errorf("a password (from %s) needs a user: give --user or NATS_USER", s.from["password"])
		}
		s.password = ""
	}
	// A node's client and operator users may read their own inbox only
	// (node.InboxPrefix); an admin reads any, so the same default fits.
	switch {
	case f.changed("inbox-prefix"):
		s.inboxPrefix = f.inbox
	case s.inboxPrefix == "" && s.user != "":
		s.inboxPrefix = node.InboxPrefix(s.user)
	}
	if (s.cert == "") != (s.key == "") {
		return s, errors.New("a TLS client certificate needs its key and the key its certificate: give --tlscert and --tlskey (or NATS_CERT and NATS_KEY) together")
	}
	return s, nil
}

// levels are where settings come from, highest first.
var levels = []string{"flag", "env", "context"}

// level is the index in levels of where setting k came from.
func (s connSettings) level(k string) (int, bool) {
	from, ok := s.from[k]
	switch {
	case !ok:
		return 0, false
	case strings.HasPrefix(from, "--"):
		return 0, true
	case strings.HasPrefix(from, "NATS_"):
		return 1, true
	}
	return 2, true
}

func (f *connFlags) changed(name string) bool {
	return f.flags != nil && f.flags.Changed(name)
}

// options turns s into the options nats.Connect takes.
func (s connSettings) options() ([]nats.Option, error) {
	var opts []nats.Option
	switch {
	case s.user != "":
		opts = append(opts, nats.UserInfo(s.user, s.password))
	case s.token != "":
		opts = append(opts, nats.Token(s.token))
	case s.creds != "":
		if _, err := os.Stat(s.creds); err != nil {
			return nil, fmt.Errorf("credentials file (from %s): %w", s.from["creds"], err)
		}
		opts = append(opts, nats.UserCredentials(s.creds))
	case s.nkey != "":
		o, err := nats.NkeyOptionFromSeed(s.nkey)
		if err != nil {
			return nil, fmt.Errorf("nkey seed file %s (from %s): %w", s.nkey, s.from["nkey"], err)
		}
		opts = append(opts, o)
	}
	if s.cert != "" {
		opts = append(opts, nats.ClientCert(s.cert, s.key))
	}
	if s.ca != "" {
		opts = append(opts, nats.RootCAs(s.ca))
	}
	if s.tlsFirst {
		opts = append(opts, nats.TLSHandshakeFirst())
	}
	if s.inboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(s.inboxPrefix))
	}
	return opts, nil
}

// who names the identity s presents, for an authorization failure.
func (s connSettings) who() string {
	switch {
	case s.user != "":
		return fmt.Sprintf("user %s (from %s)", s.user, s.from["user"])
	case s.token != "":
		return "a token (from " + s.from["token"] + ")"
	case s.creds != "":
		return fmt.Sprintf("credentials %s (from %s)", s.creds, s.from["creds"])
	case s.nkey != "":
		return fmt.Sprintf("nkey %s (from %s)", s.nkey, s.from["nkey"])
	}
	// nats.go presents the credentials a server URL carries
	// (nats://user:pass@host, nats://token@host) when no option gives any.
	for p := range strings.SplitSeq(s.url, ",") {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.User == nil {
			continue
		}
		from := "the URL in " + s.from["url"]
		if _, ok := u.User.Password(); ok {
			return fmt.Sprintf("user %s (from %s)", u.User.Username(), from)
		}
		return "a token (from " + from + ")"
	}
	return "no credentials"
}

// connect opens a connection to the node's NATS server with the resolved
// settings; extra options come last and win. Permission violations on it
// are caught for requester.
func (f *connFlags) connect(extra ...nats.Option) (*nats.Conn, bus.Subjects, error) {
	subjects, err := bus.NewSubjects(f.prefix)
	if err != nil {
		return nil, subjects, fmt.Errorf("--prefix: %w", err)
	}
	if f.timeout <= 0 {
		return nil, subjects, fmt.Errorf("--timeout %s: want a positive duration such as 10s", f.timeout)
	}
	s, err := f.resolve()
	if err != nil {
		return nil, subjects, err
	}
	f.url = redactURL(s.url)
	opts, err := s.options()
	if err != nil {
		return nil, subjects, err
	}
	f.denials = &natsbus.Denials{User: s.user}
	opts = append(opts, nats.Name("jido-bus cli"), nats.Timeout(f.timeout), nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
		if f.onAuthError != nil && isAuthError(err) {
			f.onAuthError(err)
		}
		f.denials.Handle(nc, sub, err)
	}))
	nc, err := nats.Connect(s.url, append(opts, extra...)...)
	if err != nil {
		return nil, subjects, connectError(f.url, s, err)
	}
	return nc, subjects, nil
}

// requester is the request client for a connection connect opened.
func (f *connFlags) requester(nc *nats.Conn, subjects bus.Subjects) natsbus.Requester {
	return natsbus.Requester{NC: nc, Subjects: subjects, Timeout: f.timeout, Denials: f.denials}
}

// connectError says why nats.Connect failed, as an *bus.Error where the
// failure has a type a script can act on (see exitCode): forbidden for
// refused credentials, unavailable for a server that is not there.
func connectError(url string, s connSettings, err error) error {
	switch {
	case isAuthError(err):
		return &bus.Error{Type: bus.ReasonForbidden, Message: fmt.Sprintf(
			"authorization failed at %s with %s: %v; check --user/--password, --token, --creds, --nkey, their NATS_* variables or the NATS context", url, s.who(), err)}
	case isTLSError(err):
		return &bus.Error{Type: bus.ReasonUnavailable, Message: tlsAdvice(url, s, err)}
	case errors.Is(err, nats.ErrNoServers), errors.Is(err, nats.ErrTimeout), isTimeout(err), isUnresolved(err):
		return &bus.Error{Type: bus.ReasonUnavailable, Message: fmt.Sprintf(
			"no NATS server at %s (%v): start a node with 'jido-bus serve', or point -s/--server or NATS_URL at one", url, err)}
	}
	return fmt.Errorf("connect to %s: %w", url, err)
}

// isAuthError reports whether err is the server refusing the
// credentials.
func isAuthError(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired)
}

// isTimeout reports whether err is a network timeout (a server that does
// not answer the dial in time).
func isTimeout(err error) bool {
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

// isUnresolved reports whether err is a server name that did not
// resolve: as absent a server as a refused connection.
func isUnresolved(err error) bool {
	_, ok := errors.AsType[*net.DNSError](err)
	return ok
}

// redactURL hides the secrets of a comma-separated server list: the
// password of nats://user:pass@host, and the token of nats://token@host
// (url.URL.Redacted keeps a lone user name, which here is a token).
func redactURL(servers string) string {
	parts := strings.Split(servers, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.User == nil {
			continue
		}
		if _, ok := u.User.Password(); !ok {
			u.User = url.User("xxxxx")
		}
		parts[i] = u.Redacted()
	}
	return strings.Join(parts, ",")
}
