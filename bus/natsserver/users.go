package natsserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"
)

// User is one client identity of the embedded server: a name with either a
// password or an nkey.
type User struct {
	// Name identifies the user in logs and violations; it is also the
	// user name given with a password. Letters, digits, '-' and '_', not
	// starting with '_' (reserved for the server's own connection), so
	// that it can be part of a subject (a per-user inbox prefix).
	Name string
	// Password is a bcrypt hash ("$2a$…", as `nats server passwd` makes)
	// or, for users built in process from a secret that never touches a
	// file, the plain password. nats-server compares either.
	Password string
	// NKey is the user's public nkey ("U…"); the client signs the
	// server's nonce with the seed.
	NKey string
	// Permissions restrict what the user may publish and subscribe to;
	// nil allows everything.
	Permissions *Permissions
}

// Permissions are subject allow and deny lists (NATS wildcards), as in a
// nats-server configuration. An empty allow list with a non-empty deny
// list allows everything but what is denied; both empty allows nothing
// for a non-nil Permissions' direction only when the other lists say so
// (nats-server's own rules).
type Permissions struct {
	PublishAllow, PublishDeny     []string
	SubscribeAllow, SubscribeDeny []string
	// ResponsesFor lets the user answer the requests it received (one reply
	// each, within ResponsesFor) whatever their reply subject: nats-server's
	// allow_responses. 0: no such answers.
	ResponsesFor time.Duration
}

func (p *Permissions) server() *server.Permissions {
	if p == nil {
		return nil
	}
	sp := &server.Permissions{}
	if len(p.PublishAllow)+len(p.PublishDeny) > 0 {
		sp.Publish = &server.SubjectPermission{Allow: p.PublishAllow, Deny: p.PublishDeny}
	}
	if len(p.SubscribeAllow)+len(p.SubscribeDeny) > 0 {
		sp.Subscribe = &server.SubjectPermission{Allow: p.SubscribeAllow, Deny: p.SubscribeDeny}
	}
	if p.ResponsesFor > 0 {
		sp.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: p.ResponsesFor}
	}
	return sp
}

// validName is what a User.Name may be.
var validName = regexp.MustCompile(`^[A-Za-z0-9-][A-Za-z0-9_-]*$`)

// internalUser is the name of the server's own in-process connection
// (Server.Connect) when users are configured; the leading '_' keeps it
// apart from every configured name.
const internalUser = "_jido_node"

// connectionTypeInProcess is nats-server's name (jwt.ConnectionTypeInProcess)
// of connections made with nats.InProcessServer.
const connectionTypeInProcess = "IN_PROCESS"

// users turns opts' users (and the single User/Password) into
// nats-server's, adding the in-process user the server's own Connect
// uses: a random password, no restriction, in-process connections only,
// so it cannot be used from the network even if its secret leaked.
func (o *Options) users(sopts *server.Options) (internalPassword string, err error) {
	all := o.Users
	if o.User != "" {
		// A password from the environment is kept as a hash, like the
		// configured ones: nothing in the server's options is in clear.
		// The hash lives in this process only, next to the environment
		// that holds the password, so a slow hash would protect nothing
		// and only slow every connect (seconds under -race).
		h, err := bcrypt.GenerateFromPassword([]byte(o.Password), bcrypt.MinCost)
		if err != nil {
			return "", fmt.Errorf("natsserver: user %q: %w", o.User, err)
		}
		all = append([]User{{Name: o.User, Password: string(h)}}, all...)
	}
	if len(all) == 0 {
		return "", nil
	}
	if o.Token != "" {
		return "", errors.New("natsserver: a token excludes users (nats-server cannot have both); give the token's holder a user instead")
	}
	seen := map[string]bool{}
	for _, u := range all {
		if !validName.MatchString(u.Name) {
			return "", fmt.Errorf("natsserver: user name %q: use letters, digits, '-' and '_', not starting with '_'", u.Name)
		}
		if seen[u.Name] {
			return "", fmt.Errorf("natsserver: user %q is configured twice", u.Name)
		}
		seen[u.Name] = true
		switch {
		case u.Password != "" && u.NKey != "":
			return "", fmt.Errorf("natsserver: user %q: give either a password or an nkey, not both", u.Name)
		case u.NKey != "":
			if !nkeys.IsValidPublicUserKey(u.NKey) {
				return "", fmt.Errorf("natsserver: user %q: nkey %q is not a user's public nkey (it starts with U; never configure the seed, which starts with SU)", u.Name, u.NKey)
			}
			sopts.Nkeys = append(sopts.Nkeys, &server.NkeyUser{Nkey: u.NKey, Permissions: u.Permissions.server()})
		case u.Password != "":
			sopts.Users = append(sopts.Users, &server.User{Username: u.Name, Password: u.Password, Permissions: u.Permissions.server()})
		default:
			return "", fmt.Errorf("natsserver: user %q has neither a password nor an nkey", u.Name)
		}
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("natsserver: secret of the in-process user: %w", err)
	}
	internalPassword = hex.EncodeToString(secret)
	// 256 random bits need no slow hash; the lowest cost keeps the
	// server's own connects quick.
	internalHash, err := bcrypt.GenerateFromPassword([]byte(internalPassword), bcrypt.MinCost)
	if err != nil {
		return "", fmt.Errorf("natsserver: secret of the in-process user: %w", err)
	}
	sopts.Users = append(sopts.Users, &server.User{
		Username:               internalUser,
		Password:               string(internalHash),
		AllowedConnectionTypes: map[string]struct{}{connectionTypeInProcess: {}},
	})
	return internalPassword, nil
}

// nkeyNames maps each nkey user's public key to its name, for violations.
func (o *Options) nkeyNames() map[string]string {
	m := map[string]string{}
	for _, u := range o.Users {
		if u.NKey != "" {
			m[u.NKey] = u.Name
		}
	}
	return m
}
