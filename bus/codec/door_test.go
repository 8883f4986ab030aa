package codec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// TestDecodeRefusesAtTheDoor: each case is one odd byte or header that
// used to pass the decoder and break something later — an agent that
// cannot be recovered (invalid UTF-8 in an id), a commit batch failed
// whole (attributes over the log's limit), a message decoded one way or
// another by map order (the same attribute twice) — and is now refused
// with a reason, before anything is acknowledged (issue 11).
func TestDecodeRefusesAtTheDoor(t *testing.T) {
	base := func(kv ...string) nats.Header {
		h := nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"a"}, "ce-source": {"b"}, "ce-type": {"t"}}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = append(h[kv[i]], kv[i+1])
		}
		return h
	}
	replace := func(name, v string) nats.Header {
		h := base()
		h[name] = []string{v}
		return h
	}
	many := base()
	for i := range 5000 {
		many[fmt.Sprintf("ce-x%d", i)] = []string{"0123456789"}
	}
	structured := func(body string) *nats.Msg {
		return &nats.Msg{Header: nats.Header{"content-type": {ContentTypeStructured}}, Data: []byte(body)}
	}
	big := strings.Repeat("s", 70<<10)
	cases := []struct {
		name    string
		msg     *nats.Msg
		want    string
		mention string
	}{
		{"percent-encoded invalid UTF-8 id", &nats.Msg{Header: replace("ce-id", "bad%FF")}, bus.ReasonInvalidAttribute, "ce-id"},
		{"raw invalid UTF-8 id", &nats.Msg{Header: replace("ce-id", "bad\xff")}, bus.ReasonInvalidAttribute, "UTF-8"},
		{"invalid UTF-8 source", &nats.Msg{Header: replace("ce-source", "/x%C3")}, bus.ReasonInvalidAttribute, "ce-source"},
		{"invalid UTF-8 subject", &nats.Msg{Header: base("ce-subject", "%FE")}, bus.ReasonInvalidAttribute, "ce-subject"},
		{"invalid UTF-8 extension", &nats.Msg{Header: base("ce-trace", "x%FFy")}, bus.ReasonInvalidAttribute, "ce-trace"},
		{"invalid UTF-8 content type", &nats.Msg{Header: base("ce-datacontenttype", "text/%FF"), Data: []byte("x")}, bus.ReasonInvalidAttribute, "ce-datacontenttype"},
		{"NUL in id", &nats.Msg{Header: replace("ce-id", "a%00b")}, bus.ReasonInvalidAttribute, "U+0000"},
		{"NUL in extension", &nats.Msg{Header: base("ce-trace", "%00")}, bus.ReasonInvalidAttribute, "U+0000"},
		{"structured invalid UTF-8 id", structured("{\"specversion\":\"1.0\",\"id\":\"bad\xff\",\"source\":\"b\",\"type\":\"t\"}"), bus.ReasonInvalidAttribute, "UTF-8"},
		{"structured NUL in extension", structured(`{"specversion":"1.0","id":"a","source":"b","type":"t","trace":"\u0000"}`), bus.ReasonInvalidAttribute, "U+0000"},
		{"ce-id and CE-ID", &nats.Msg{Header: base("CE-ID", "b")}, bus.ReasonInvalidAttribute, "ce-id"},
		{"ce-id and Ce-Id", &nats.Msg{Header: base("Ce-Id", "a")}, bus.ReasonInvalidAttribute, "more than once"},
		{"ce-id with two values", &nats.Msg{Header: base("ce-id", "b")}, bus.ReasonInvalidAttribute, "ce-id"},
		{"ce-specversion twice", &nats.Msg{Header: base("Ce-Specversion", "1.0")}, bus.ReasonInvalidAttribute, "ce-specversion"},
		{"extension twice in two cases", &nats.Msg{Header: base("ce-trace", "1", "Ce-Trace", "2")}, bus.ReasonInvalidAttribute, "ce-trace"},
		{"content-type twice", &nats.Msg{Header: base("content-type", "text/plain", "Content-Type", "application/json"), Data: []byte("x")}, bus.ReasonMalformed, "content-type"},
		{"structured content-type twice", &nats.Msg{Header: nats.Header{"content-type": {ContentTypeStructured, "text/plain"}}, Data: []byte(`{}`)}, bus.ReasonMalformed, "content-type"},
		{"attribute header without a name", &nats.Msg{Header: base("ce-", "x")}, bus.ReasonInvalidAttribute, "names no attribute"},
		{"extension name with a dash", &nats.Msg{Header: base("ce-my-ext", "x")}, bus.ReasonInvalidAttribute, "ce-my-ext"},
		{"time past the log's range", &nats.Msg{Header: base("ce-time", "3000-01-01T00:00:00Z")}, bus.ReasonInvalidAttribute, "time"},
		{"time that is not RFC 3339", &nats.Msg{Header: base("ce-time", "2026-01-01 10:00")}, bus.ReasonInvalidAttribute, "RFC 3339"},
		{"70 KB ce-source", &nats.Msg{Header: replace("ce-source", big)}, bus.ReasonTooLarge, "attributes"},
		{"70 KB structured source", structured(`{"specversion":"1.0","id":"a","source":"` + big + `","type":"t"}`), bus.ReasonTooLarge, "attributes"},
		{"70 KB extension", &nats.Msg{Header: base("ce-trace", big)}, bus.ReasonTooLarge, "attributes"},
		{"5000 extension headers", &nats.Msg{Header: many}, bus.ReasonTooLarge, "attributes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Several times: a decoder that reads headers in map order would
			// pass some of the time.
			for range 20 {
				_, _, err := testDecoder().Decode(c.msg, "t")
				if err == nil {
					t.Fatalf("Decode accepted it")
				}
				if bus.ErrorType(err) != c.want || !strings.Contains(err.Error(), c.mention) {
					t.Fatalf("Decode = %v, want %s mentioning %q", err, c.want, c.mention)
				}
				if len(err.Error()) > 1024 {
					t.Fatalf("the error repeats the input: %d bytes", len(err.Error()))
				}
			}
		})
	}
}

// TestDecodeTakesWhatTheDoorAllows: the checks above refuse only what
// they must — non-ASCII text, a literal "%" and header names in any case
// still pass.
func TestDecodeTakesWhatTheDoorAllows(t *testing.T) {
	h := nats.Header{"Ce-Specversion": {"1.0"}, "CE-ID": {"ünï 100%"}, "ce-source": {"https://x/a%25FF"}, "ce-Type": {"t"}, "Ce-Trace": {"%E2%9C%93"}}
	s, _, err := testDecoder().Decode(&nats.Msg{Header: h}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "ünï 100%" || s.Source() != "https://x/a%FF" || s.Extensions()["trace"] != "✓" {
		t.Fatalf("decoded %v", s)
	}
}
