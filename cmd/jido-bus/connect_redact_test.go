package main

import "testing"

// TestRedactURLHidesTokens: a server URL's password and a token URL's
// token never reach a message.
func TestRedactURLHidesTokens(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                          "nats://127.0.0.1:4222",
		"nats://admin:pw@127.0.0.1:4222":                 "nats://admin:xxxxx@127.0.0.1:4222",
		"nats://s3cret-token@127.0.0.1:4222":             "nats://xxxxx@127.0.0.1:4222",
		"nats://a:b@h1:4222,nats://tok@h2:4222":          "nats://a:xxxxx@h1:4222,nats://xxxxx@h2:4222",
		"tls://tok@[::1]:4222, nats://u:p@example.com:1": "tls://xxxxx@[::1]:4222,nats://u:xxxxx@example.com:1",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
