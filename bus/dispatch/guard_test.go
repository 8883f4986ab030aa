package dispatch

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// envWith returns the lookup function of a fake environment.
func envWith(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
}

// testEnvVars is the environment of the guard tests: the secret the
// webhooks name, and a variable outside the allowed prefix.
var testEnvVars = map[string]string{"JIDO_SECRET_HOOK": "env-s3cret", "AWS_SECRET_ACCESS_KEY": "aws-value"}

func mustGuard(t *testing.T, p WebhookPolicy) *WebhookGuard {
	t.Helper()
	g, err := NewWebhookGuard(p)
	if err != nil {
		t.Fatalf("NewWebhookGuard(%+v): %v", p, err)
	}
	t.Cleanup(g.CloseIdleConnections)
	return g
}

// TestWebhookGuardDestinations: every spelling a caller may try to reach
// a destination the operator did not allow is refused as forbidden before
// any request, and the plain forms the operator did allow pass.
func TestWebhookGuardDestinations(t *testing.T) {
	g := mustGuard(t, WebhookPolicy{
		Allow: []string{
			"https://hooks.example.com",
			"https://*.tenants.example.com/in",
			"http://hooks.example.com:8080/v1/",
			"http://203.0.113.7",
			"http://[2001:db8::7]:9000",
			"http://127.0.0.1:9999",
			"https://HOOKS.Example.ORG/Path",
		},
	})
	cases := []struct {
		url  string
		want string // a substring of the forbidden error; "" means allowed
	}{
		{"https://hooks.example.com/jido", ""},
		{"https://hooks.example.com", ""},
		{"https://hooks.example.com:443/x", ""},
		{"https://HOOKS.EXAMPLE.COM/x", ""},
		{"https://a.tenants.example.com/in", ""},
		{"https://a.b.tenants.example.com/in/x", ""},
		{"http://hooks.example.com:8080/v1/x", ""},
		{"http://hooks.example.com:8080/v1", ""},
		{"http://203.0.113.7/x", ""},
		{"http://[2001:db8::7]:9000/", ""},
		{"https://hooks.example.org/Path/x", ""},

		{"https://example.com.evil.net/", "does not match"},
		{"https://hooks.example.com.evil.net/", "does not match"},
		{"https://hooks.example.com@evil.net/", "user info"},
		{"https://user:pw@hooks.example.com/", "user info"},
		{"https://evilhooks.example.com/", "does not match"},
		{"https://tenants.example.com/in", "does not match"},
		{"https://a.tenants.example.com/inside", "does not match"},
		{"https://a.tenants.example.com/", "does not match"},
		{"https://evil-tenants.example.com/in", "does not match"},
		{"http://hooks.example.com/jido", "does not match"},
		{"https://hooks.example.com:8443/", "does not match"},
		{"http://hooks.example.com:8080/v2", "does not match"},
		{"http://hooks.example.com:8080/v1x", "does not match"},
		{"http://hooks.example.com:8080/v1/../admin", "dot segment"},
		{"http://hooks.example.com:8080/v1/%2e%2e/admin", "dot segment"},
		{"http://hooks.example.com:8080/v1/a%2fb", "encoded"},
		{"http://hooks.example.com:8080/v1/..;/admin", "dot segment"},
		{"http://hooks.example.com:8080/v1/.;x/admin", "dot segment"},
		{"http://hooks.example.com:8080/v1/%2e%2e%3bjsessionid=1/admin", "dot segment"},
		{"http://hooks.example.com:8080/v1/%252e%252e/admin", "encoded twice"},
		{"http://hooks.example.com:8080/v1/%252fadmin", "encoded twice"},
		{"http://hooks.example.com:8080/v1/a;b/c", ""},
		{"http://hooks.example.com:8080/v1/..a/c", ""},
		{"https://s3cret-t0ken@hooks.example.com/", "user info"},
		{"https://hooks.example.com./", "trailing dot"},
		{"https://hooks.exämple.com/", "xn--"},
		{"https://xn--hooks-example.com/", "does not match"},
		{"http://2130706433/", "dotted-decimal"},
		{"http://0x7f.1/", "dotted-decimal"},
		{"http://0x7f000001/", "dotted-decimal"},
		{"http://017700000001/", "dotted-decimal"},
		{"http://0177.0.0.1/", "dotted-decimal"},
		{"http://127.1/", "dotted-decimal"},
		{"http://127.0.0.1:9999/", "loopback"},
		{"http://127.0.0.1/", "loopback"},
		{"http://[::1]/", "loopback"},
		{"http://[::ffff:127.0.0.1]:9999/", "loopback"},
		{"http://[::ffff:7f00:1]/", "loopback"},
		{"http://[::127.0.0.1]/", "not a public address"},
		{"http://[fe80::1%25eth0]/", "zone"},
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://[fd00::1]/", "private"},
		{"http://10.0.0.1/", "private"},
		{"http://192.168.1.1/", "private"},
		{"http://172.16.0.1/", "private"},
		{"http://100.64.0.1/", "shared address space"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://[::]/", "unspecified"},
		{"http://224.0.0.1/", "multicast"},
		{"http://[ff02::1]/", "multicast"},
		{"http://[64:ff9b::a00:1]/", "private"},
		{"http://[2002:a00:1::]/", "private"},
		{"http://localhost/", "does not match"},
		{"https://hooks.example.com:443@evil.net/", "user info"},
		{"https://hooks.example.com#@evil.net/", ""},
		{"https://[::ffff:169.254.169.254]/", "metadata"},
		{"http://[::ffff:a9fe:a9fe]/", "metadata"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			cfg := Config{Kind: KindWebhook, URL: tc.url, SecretEnv: "JIDO_SECRET_HOOK"}
			err := Admit(cfg, Env{Webhooks: g, LookupEnv: envWith(testEnvVars)})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Admit: %v", err)
				}
				return
			}
			if bus.ErrorType(err) != bus.ReasonForbidden || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Admit = %v, want a forbidden error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "env-s3cret") || strings.Contains(err.Error(), ":pw@") || strings.Contains(err.Error(), "s3cret-t0ken") {
				t.Fatalf("error %q shows a secret", err)
			}
			// New refuses what Admit refuses: the delivery path is guarded too.
			if _, err := New(cfg, Env{Webhooks: g, LookupEnv: envWith(testEnvVars)}); bus.ErrorType(err) != bus.ReasonForbidden {
				t.Fatalf("New = %v, want forbidden", err)
			}
		})
	}
}

// TestWebhookURLUnparsable: spellings that would read differently to
// another parser are not URLs to Go's, and refused before any policy.
func TestWebhookURLUnparsable(t *testing.T) {
	for _, u := range []string{`https://hooks.example.com\@evil.net/`, "https://hooks.example.com%2eevil.net/", "https://hooks%2eexample.com/", "http://hooks.example.com%00/", "http://hooks.example.com\t/"} {
		err := Config{Kind: KindWebhook, URL: u, SecretEnv: "JIDO_SECRET_HOOK"}.Validate()
		if bus.ErrorType(err) != bus.ReasonInvalidRequest {
			t.Errorf("Validate(%q) = %v, want invalid_request", u, err)
		}
	}
}

// TestWebhookGuardPrivateAllowed: an address the operator lists in
// AllowPrivate passes, in its mapped IPv6 spelling too; one next to it
// does not.
func TestWebhookGuardPrivateAllowed(t *testing.T) {
	g := mustGuard(t, WebhookPolicy{
		Allow:        []string{"http://127.0.0.1:9999", "http://10.1.2.3", "http://10.9.9.9"},
		AllowPrivate: []string{"127.0.0.0/8", "10.1.0.0/16"},
	})
	env := Env{Webhooks: g, LookupEnv: envWith(testEnvVars)}
	for url, ok := range map[string]bool{
		"http://127.0.0.1:9999/hook":          true,
		"http://[::ffff:127.0.0.1]:9999/hook": true,
		"http://10.1.2.3/":                    true,
		"http://10.9.9.9/":                    false,
	} {
		err := Admit(Config{Kind: KindWebhook, URL: url, SecretEnv: "JIDO_SECRET_HOOK"}, env)
		if ok != (err == nil) {
			t.Errorf("Admit(%s) = %v, want allowed %v", url, err, ok)
		}
	}
}

// TestWebhookGuardNoPolicy: without an allow-list (the default) every
// webhook is refused, and the error says how the operator allows one.
func TestWebhookGuardNoPolicy(t *testing.T) {
	cfg := Config{Kind: KindWebhook, URL: "https://hooks.example.com/", SecretEnv: "JIDO_SECRET_HOOK"}
	for name, g := range map[string]*WebhookGuard{"nil guard": nil, "empty policy": mustGuard(t, WebhookPolicy{})} {
		err := Admit(cfg, Env{Webhooks: g, LookupEnv: envWith(testEnvVars)})
		if bus.ErrorType(err) != bus.ReasonForbidden || !strings.Contains(err.Error(), "--webhook-allow") {
			t.Errorf("%s: Admit = %v, want forbidden naming --webhook-allow", name, err)
		}
	}
	// Other kinds need no policy; lists are checked element by element.
	if err := Admit(Config{Targets: []Config{{Kind: KindNATS}, {Kind: KindLog}}}, Env{}); err != nil {
		t.Errorf("Admit(nats, log) = %v", err)
	}
	err := Admit(Config{Targets: []Config{{Kind: KindNATS}, cfg}}, Env{LookupEnv: envWith(testEnvVars)})
	if bus.ErrorType(err) != bus.ReasonForbidden || !strings.Contains(err.Error(), "[1].url") {
		t.Errorf("Admit(list) = %v, want forbidden naming [1].url", err)
	}
}

// TestWebhookGuardSecretsAndHeaders: the rules on the secret and the
// headers, and which refusals are forbidden (the operator's policy) and
// which invalid_request (something to fix where the node runs, or a
// header the dispatcher writes itself). No error shows a value of the
// environment.
func TestWebhookGuardSecretsAndHeaders(t *testing.T) {
	g := mustGuard(t, WebhookPolicy{Allow: []string{"https://hooks.example.com"}})
	env := Env{Webhooks: g, LookupEnv: envWith(testEnvVars)}
	base := func() Config {
		return Config{Kind: KindWebhook, URL: "https://hooks.example.com/", SecretEnv: "JIDO_SECRET_HOOK"}
	}
	cases := []struct {
		name   string
		change func(*Config)
		typ    string
		want   string
	}{
		{"secret_env in the prefix", func(*Config) {}, "", ""},
		{"inline secret", func(c *Config) { c.SecretEnv, c.Secret = "", "s3cret-inline" }, bus.ReasonForbidden, "secret_env with a JIDO_SECRET_"},
		{"secret_env outside the prefix", func(c *Config) { c.SecretEnv = "AWS_SECRET_ACCESS_KEY" }, bus.ReasonForbidden, "JIDO_SECRET_"},
		{"secret_env the bare prefix", func(c *Config) { c.SecretEnv = "JIDO_SECRET_" }, bus.ReasonForbidden, "JIDO_SECRET_"},
		{"secret_env lower-case prefix", func(c *Config) { c.SecretEnv = "jido_secret_hook" }, bus.ReasonForbidden, "JIDO_SECRET_"},
		{"secret_env not set", func(c *Config) { c.SecretEnv = "JIDO_SECRET_MISSING" }, bus.ReasonInvalidRequest, "JIDO_SECRET_MISSING"},
		{"secret_env lower-case after the prefix", func(c *Config) { c.SecretEnv = "JIDO_SECRET_hook_2" }, bus.ReasonInvalidRequest, "JIDO_SECRET_hook_2"},
		{"secret_env with a slash", func(c *Config) { c.SecretEnv = "JIDO_SECRET_../HOOK" }, bus.ReasonForbidden, "letters, digits and underscores"},
		{"secret_env with an equals sign", func(c *Config) { c.SecretEnv = "JIDO_SECRET_HOOK=x" }, bus.ReasonForbidden, "letters, digits and underscores"},
		{"secret_env with a NUL", func(c *Config) { c.SecretEnv = "JIDO_SECRET_HOOK\x00" }, bus.ReasonForbidden, "letters, digits and underscores"},
		{"harmless header", func(c *Config) { c.Headers = map[string]string{"X-Tenant": "a"} }, "", ""},
		{"Authorization", func(c *Config) { c.Headers = map[string]string{"Authorization": "Bearer t"} }, bus.ReasonForbidden, `"Authorization"`},
		{"authorization", func(c *Config) { c.Headers = map[string]string{"authorization": "Bearer t"} }, bus.ReasonForbidden, `"authorization"`},
		{"Host", func(c *Config) { c.Headers = map[string]string{"HOST": "internal"} }, bus.ReasonForbidden, `"HOST"`},
		{"Cookie", func(c *Config) { c.Headers = map[string]string{"cOOkie": "a=b"} }, bus.ReasonForbidden, `"cOOkie"`},
		{"Proxy-Authorization", func(c *Config) { c.Headers = map[string]string{"Proxy-Authorization": "x"} }, bus.ReasonForbidden, "Proxy-Authorization"},
		{"Proxy-Anything", func(c *Config) { c.Headers = map[string]string{"proxy-connection": "x"} }, bus.ReasonForbidden, "proxy-connection"},
		{"Connection", func(c *Config) { c.Headers = map[string]string{"Connection": "close"} }, bus.ReasonForbidden, "hop-by-hop"},
		{"Keep-Alive", func(c *Config) { c.Headers = map[string]string{"Keep-Alive": "1"} }, bus.ReasonForbidden, "hop-by-hop"},
		{"TE", func(c *Config) { c.Headers = map[string]string{"te": "trailers"} }, bus.ReasonForbidden, "hop-by-hop"},
		{"Trailer", func(c *Config) { c.Headers = map[string]string{"Trailer": "x"} }, bus.ReasonForbidden, "hop-by-hop"},
		{"Transfer-Encoding", func(c *Config) { c.Headers = map[string]string{"Transfer-Encoding": "chunked"} }, bus.ReasonForbidden, "hop-by-hop"},
		{"Upgrade", func(c *Config) { c.Headers = map[string]string{"UPGRADE": "websocket"} }, bus.ReasonForbidden, "hop-by-hop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.change(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatalf("the config is structurally invalid (the test is wrong): %v", err)
			}
			err := Admit(cfg, env)
			if tc.typ == "" {
				if err != nil {
					t.Fatalf("Admit: %v", err)
				}
				return
			}
			if bus.ErrorType(err) != tc.typ || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Admit = %v, want %s containing %q", err, tc.typ, tc.want)
			}
			for _, v := range []string{"env-s3cret", "aws-value", "s3cret-inline", "Bearer t"} {
				if strings.Contains(err.Error(), v) {
					t.Fatalf("error %q shows the value %q", err, v)
				}
			}
			if _, err := New(cfg, env); bus.ErrorType(err) != tc.typ {
				t.Fatalf("New = %v, want %s", err, tc.typ)
			}
		})
	}
	// Written by the dispatcher: a malformed config, not a policy matter.
	for _, h := range []string{"Content-Length", "content-type", "Ce-Id", "Jido-Signature"} {
		cfg := base()
		cfg.Headers = map[string]string{h: "1"}
		if err := cfg.Validate(); bus.ErrorType(err) != bus.ReasonInvalidRequest {
			t.Errorf("Validate with header %s = %v, want invalid_request", h, err)
		}
	}
	cfg := base()
	cfg.Headers = map[string]string{"X-A": "1\r\nAuthorization: x"}
	if err := cfg.Validate(); bus.ErrorType(err) != bus.ReasonInvalidRequest {
		t.Errorf("Validate with CR/LF in a value = %v, want invalid_request", err)
	}
}

// TestWebhookPolicyInvalid: a bad pattern or CIDR fails NewWebhookGuard
// with an error that names it and shows the form wanted.
func TestWebhookPolicyInvalid(t *testing.T) {
	cases := []struct {
		p    WebhookPolicy
		want string
	}{
		{WebhookPolicy{Allow: []string{"hooks.example.com"}}, `"hooks.example.com"`},
		{WebhookPolicy{Allow: []string{"ftp://hooks.example.com"}}, "http or https"},
		{WebhookPolicy{Allow: []string{"https://u@hooks.example.com"}}, "user info"},
		{WebhookPolicy{Allow: []string{"https://hooks.example.com/?a=b"}}, "query"},
		{WebhookPolicy{Allow: []string{"https://hooks.example.com/#x"}}, "fragment"},
		{WebhookPolicy{Allow: []string{"https://*"}}, "wildcard"},
		{WebhookPolicy{Allow: []string{"https://*.com"}}, "wildcard"},
		{WebhookPolicy{Allow: []string{"https://a.*.example.com"}}, "wildcard"},
		{WebhookPolicy{Allow: []string{"https://hooks.example.com:0"}}, "port"},
		{WebhookPolicy{Allow: []string{"http://0x7f.1"}}, "dotted-decimal"},
		{WebhookPolicy{Allow: []string{"https://hooks.example.com/a/../b"}}, "dot segment"},
		{WebhookPolicy{Allow: []string{"https://hooks.example.com/**"}}, "no wildcard in its path"},
		{WebhookPolicy{Allow: []string{"https://hooks.example.com/in*"}}, "no wildcard in its path"},
		{WebhookPolicy{Allow: []string{""}}, "empty"},
		{WebhookPolicy{AllowPrivate: []string{"10.0.0.0/33"}}, `"10.0.0.0/33"`},
		{WebhookPolicy{AllowPrivate: []string{"localhost"}}, "CIDR"},
	}
	for _, tc := range cases {
		_, err := NewWebhookGuard(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewWebhookGuard(%+v) = %v, want an error containing %q", tc.p, err, tc.want)
			continue
		}
		// The form wanted is shown once, not once by the parser and again
		// by the guard.
		if n := strings.Count(err.Error(), "scheme://host"); n > 1 {
			t.Errorf("NewWebhookGuard(%+v) = %v: the form is shown %d times", tc.p, err, n)
		}
	}
	// Bare addresses are one-address networks; non-canonical CIDRs are masked.
	if _, err := NewWebhookGuard(WebhookPolicy{AllowPrivate: []string{"127.0.0.1", "10.1.2.3/8", "fd00::/8"}}); err != nil {
		t.Errorf("NewWebhookGuard: %v", err)
	}
}

// TestWebhookGuardConnectTime: a real receiver on 127.0.0.1, reached by
// an allowed URL, gets nothing unless AllowPrivate holds 127.0.0.0/8; and
// a public-looking name that resolves to it (DNS rebinding) is refused when
// the connection is made, not only when the name is checked.
func TestWebhookGuardConnectTime(t *testing.T) {
	rcv := newReceiver(t, response{status: http.StatusNoContent})
	port := rcv.srv.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	portStr := strings.TrimPrefix(rcv.srv.URL, "http://127.0.0.1")
	loopbackURL := rcv.srv.URL + "/hook"
	namedURL := "http://hooks.example.com" + portStr + "/hook"
	rebind := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	if port == 0 {
		t.Fatal("no port")
	}

	deliver := func(t *testing.T, g *WebhookGuard, url string) error {
		t.Helper()
		d, err := New(Config{Kind: KindWebhook, URL: url, SecretEnv: "JIDO_SECRET_HOOK", MaxAttempts: 3},
			Env{Webhooks: g, Clock: newFakeClock(), LookupEnv: envWith(testEnvVars)})
		if err != nil {
			return err
		}
		s := testSignal(t, "counter.changed")
		return d.Dispatch(context.Background(), "c1", &s)
	}

	t.Run("loopback literal without AllowPrivate", func(t *testing.T) {
		g := mustGuard(t, WebhookPolicy{Allow: []string{"http://127.0.0.1" + portStr}})
		if err := deliver(t, g, loopbackURL); bus.ErrorType(err) != bus.ReasonForbidden {
			t.Fatalf("deliver = %v, want forbidden", err)
		}
	})
	t.Run("loopback literal with AllowPrivate", func(t *testing.T) {
		g := mustGuard(t, WebhookPolicy{Allow: []string{"http://127.0.0.1" + portStr}, AllowPrivate: []string{"127.0.0.0/8"}})
		if err := deliver(t, g, loopbackURL); err != nil {
			t.Fatalf("deliver: %v", err)
		}
	})
	t.Run("name resolving to loopback", func(t *testing.T) {
		before := len(rcv.requests())
		g := mustGuard(t, WebhookPolicy{Allow: []string{"http://hooks.example.com" + portStr}})
		g.lookup = rebind
		err := deliver(t, g, namedURL)
		we, ok := errors.AsType[*WebhookError](err)
		if !ok || !errors.Is(err, ErrPrivateAddress) || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Fatalf("deliver = %v, want a *WebhookError for a private address naming 127.0.0.1", err)
		}
		if we.Attempts != 1 || we.Why != "not retried" {
			t.Errorf("Attempts, Why = %d, %q; want 1, not retried (the address will not change by waiting)", we.Attempts, we.Why)
		}
		if strings.Contains(err.Error(), "env-s3cret") {
			t.Fatalf("error %q shows the secret", err)
		}
		if n := len(rcv.requests()); n != before {
			t.Fatalf("the receiver got %d requests, want none", n-before)
		}
	})
	t.Run("name resolving to loopback with AllowPrivate", func(t *testing.T) {
		g := mustGuard(t, WebhookPolicy{Allow: []string{"http://hooks.example.com" + portStr}, AllowPrivate: []string{"127.0.0.0/8"}})
		g.lookup = rebind
		if err := deliver(t, g, namedURL); err != nil {
			t.Fatalf("deliver: %v", err)
		}
	})
}

// TestWebhookGuardIgnoresProxyEnvironment: a proxy named in the
// environment would connect to the destination itself, out of reach of the
// connect-time check, so the guard's transport uses none.
func TestWebhookGuardIgnoresProxyEnvironment(t *testing.T) {
	proxy := newReceiver(t, response{status: http.StatusOK})
	t.Setenv("HTTP_PROXY", proxy.srv.URL)
	t.Setenv("HTTPS_PROXY", proxy.srv.URL)
	t.Setenv("NO_PROXY", "")
	g := mustGuard(t, WebhookPolicy{Allow: []string{"http://hooks.example.com"}})
	g.lookup = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}
	d, err := New(Config{Kind: KindWebhook, URL: "http://hooks.example.com/x", SecretEnv: "JIDO_SECRET_HOOK", MaxAttempts: 1},
		Env{Webhooks: g, Clock: newFakeClock(), LookupEnv: envWith(testEnvVars)})
	if err != nil {
		t.Fatal(err)
	}
	s := testSignal(t, "counter.changed")
	if err := d.Dispatch(context.Background(), "c1", &s); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("Dispatch = %v, want ErrPrivateAddress", err)
	}
	if n := len(proxy.requests()); n != 0 {
		t.Fatalf("the proxy got %d requests", n)
	}
}

// TestRedactURLHidesAllUserInfo: a user name alone is often the
// credential (a token as user info), so errors and logs show none of it.
func TestRedactURLHidesAllUserInfo(t *testing.T) {
	for raw, want := range map[string]string{
		"https://t0ken@hooks.example.com/in":      "https://xxxxx@hooks.example.com/in",
		"https://user:pw@hooks.example.com/in":    "https://xxxxx@hooks.example.com/in",
		"https://hooks.example.com:443@evil.net/": "https://xxxxx@evil.net/",
		"https://hooks.example.com/in?a=b":        "https://hooks.example.com/in?a=b",
	} {
		if got := redactURL(raw); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
