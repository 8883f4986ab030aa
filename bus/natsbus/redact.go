package natsbus

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/codec"
)

// DigestPrefix begins the value that replaces a credential in a dead
// letter: "hmac-sha256:" and 32 hex digits, the first 16 bytes of the
// HMAC-SHA256 of the value under the node's digest key.
const DigestPrefix = "hmac-sha256:"

// credentialWords are the parts of a header or attribute name that say it
// carries a credential: Authorization and Proxy-Authorization, Cookie,
// X-Api-Key, X-Auth-Token, ce-apikey, a session id, anything named like a
// token, key, secret or password. Matching a part of the name errs on the
// side of hiding (Idempotency-Key is digested too): the digest still tells
// equal values apart.
var credentialWords = []string{"auth", "cookie", "token", "key", "secret", "passw", "pwd", "credential", "session"}

// credentialName reports whether a header or a structured event's
// attribute named name carries a credential.
func credentialName(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// digest is what a dead letter keeps of a credential: equal values have
// equal digests, so a reader can tell the same token sent twice, but the
// value cannot be read back; and since the HMAC is keyed with the node's
// own key, a weak password cannot be found by hashing a dictionary.
func digest(key []byte, value string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(value))
	return DigestPrefix + hex.EncodeToString(m.Sum(nil)[:16])
}

// NewDigestKey returns a random key for Options.DigestKey.
func NewDigestKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// redactHeader returns a copy of h with the value of every credential
// header replaced by its digest; the names stay, so a reader sees what
// was sent.
func redactHeader(h nats.Header, key []byte) nats.Header {
	if h == nil {
		return nil
	}
	out := maps.Clone(h)
	for name, vals := range h {
		if !credentialName(name) {
			continue
		}
		red := make([]string, len(vals))
		for i, v := range vals {
			red[i] = digest(key, v)
		}
		out[name] = red
	}
	return out
}

// redactStructured returns body with the value of every credential
// attribute replaced by its digest when h says body is a structured
// event (application/cloudevents+json): there the attributes a binary
// message carries in ce- headers are members of the JSON object. The
// event's data is left as it was, as in binary mode. A body that is not
// a JSON object, or holds no such attribute, is returned unchanged.
func redactStructured(h nats.Header, body []byte, key []byte) []byte {
	if !structured(h) {
		return body
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return body
	}
	changed := false
	for name, raw := range members {
		if name == "data" || name == "data_base64" || !credentialName(name) {
			continue
		}
		v := string(bytes.TrimSpace(raw))
		var s string
		if json.Unmarshal(raw, &s) == nil {
			v = s
		}
		members[name], _ = json.Marshal(digest(key, v))
		changed = true
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(members)
	if err != nil { // raw members of a valid object marshal again
		return body
	}
	return out
}

// structured reports whether h names the structured content mode, with
// the content-type header in any case, as the decoder reads it.
func structured(h nats.Header) bool {
	for name, vals := range h {
		if !strings.EqualFold(name, codec.HeaderContentType) {
			continue
		}
		for _, v := range vals {
			mt, _, _ := strings.Cut(v, ";")
			if strings.EqualFold(strings.TrimSpace(mt), codec.ContentTypeStructured) {
				return true
			}
		}
	}
	return false
}
