package projects

import (
	"net/http"
	"testing"
)

// captured is a RoundTripper keeping the Authorization it was given.
type captured struct{ auth string }

func (c *captured) RoundTrip(r *http.Request) (*http.Response, error) {
	c.auth = r.Header.Get("Authorization")
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
}

// TestBearerOnlyToTheOperatorsSchemeAndHost: the token goes to the URL
// the operator listed, not to another host nor, after a redirect, to the
// same host over plain http, where anyone on the way would read it.
func TestBearerOnlyToTheOperatorsSchemeAndHost(t *testing.T) {
	t.Setenv("TEST_BEARER", "tok")
	for _, c := range []struct {
		url, want string
	}{
		{"https://mcp.example.com/mcp", "Bearer tok"},
		{"http://mcp.example.com/mcp", ""},
		{"https://other.example.com/mcp", ""},
		{"https://mcp.example.com:8443/mcp", ""},
	} {
		next := &captured{}
		b := bearer{env: "TEST_BEARER", scheme: "https", host: "mcp.example.com", next: next}
		req, err := http.NewRequest(http.MethodPost, c.url, http.NoBody)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if next.auth != c.want {
			t.Errorf("%s: Authorization %q, want %q", c.url, next.auth, c.want)
		}
	}
}
