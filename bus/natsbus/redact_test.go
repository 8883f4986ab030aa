package natsbus

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// The credentials a refused message carries are kept in its dead letter
// by name, their values replaced by a keyed digest, on <prefix>.dlq.* and
// in the record the log gets, in both content modes. A signal refused
// with Authorization: Bearer … once stored the token verbatim.
func TestDeadLetterKeepsCredentialsAsDigests(t *testing.T) {
	key := []byte("a digest key of the node, 32 b..")
	const (
		bearer = "Bearer tok-abc-123456"
		apiKey = "key-xyz-987654"
	)
	credentials := nats.Header{
		"Authorization":       {bearer},
		"Proxy-Authorization": {"Basic dXNlcjpwYXNz"},
		"Cookie":              {"session=s3ss10n"},
		"X-Api-Key":           {apiKey},
		"X-Auth-Token":        {"auth-tok-1"},
		"My-Secret":           {"shh-secret-1"},
		"Db-Password":         {"pw-secret-2"},
		"X-Trace":             {"kept-as-is"},
	}
	binary := func() *nats.Msg {
		m := binaryMsg(t, "jido.agent.p1.counter.increment", func(s *bus.Signal) { s.SetExtension("apikey", "ext-key-123456") })
		for k, v := range credentials {
			m.Header[k] = v
		}
		return m
	}
	structuredMsg := func() *nats.Msg {
		m := &nats.Msg{Subject: "jido.agent.p1.counter.increment", Header: nats.Header{"Content-Type": {codec.ContentTypeStructured}},
			Data: []byte(`{"specversion":"1.0","id":"x1","source":"s","type":"counter.increment","apikey":"ext-key-123456","data":{"by":1}}`)}
		for k, v := range credentials {
			m.Header[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name string
		msg  func() *nats.Msg
	}{{"binary", binary}, {"structured", structuredMsg}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, Options{DigestKey: key})
			if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
				d.Reject(bus.Errorf(bus.ReasonNotFound, "no agent p1"))
			}); err != nil {
				t.Fatal(err)
			}
			if err := f.client.PublishMsg(c.msg()); err != nil {
				t.Fatal(err)
			}
			dl := f.nextDeadLetter(t)
			filed := f.awaitFiled(t, 1)
			if len(filed) != 1 {
				t.Fatalf("%d dead letters filed, want 1", len(filed))
			}
			record, err := json.Marshal(filed[0])
			if err != nil {
				t.Fatal(err)
			}
			stored := filed[0].Signal(bus.Limits{})
			published := headerText(dl.Header) + string(dl.Data)
			for _, where := range []struct{ name, text string }{
				{"published on " + dl.Subject, published},
				{"the record", string(record)},
				{"the log's signal", string(stored.Data())},
			} {
				for _, secret := range []string{"tok-abc-123456", apiKey, "dXNlcjpwYXNz", "s3ss10n", "auth-tok-1", "shh-secret-1", "pw-secret-2", "ext-key-123456"} {
					if strings.Contains(where.text, secret) {
						t.Errorf("%s holds %s: %s", where.name, secret, where.text)
					}
				}
			}
			for name := range credentials {
				if name == "X-Trace" {
					continue
				}
				v := dl.Header.Get(name)
				if !strings.HasPrefix(v, DigestPrefix) || filed[0].Header.Get(name) != v {
					t.Errorf("%s is %q on the subject, %q in the record; want its digest in both", name, v, filed[0].Header.Get(name))
				}
			}
			if dl.Header.Get("Authorization") != digest(key, bearer) {
				t.Errorf("the digest of Authorization is not the keyed HMAC of its value")
			}
			if dl.Header.Get("X-Trace") != "kept-as-is" || filed[0].Header.Get("X-Trace") != "kept-as-is" {
				t.Errorf("a header that carries no credential changed")
			}
			if c.name == "structured" {
				var ev map[string]any
				if err := json.Unmarshal(dl.Data, &ev); err != nil || !strings.HasPrefix(ev["apikey"].(string), DigestPrefix) || ev["id"] != "x1" {
					t.Errorf("the structured body %s: want apikey digested, the rest as sent", dl.Data)
				}
			} else if !strings.HasPrefix(dl.Header.Get("ce-apikey"), DigestPrefix) {
				t.Errorf("ce-apikey %q, want its digest", dl.Header.Get("ce-apikey"))
			}
		})
	}
}

func headerText(h nats.Header) string {
	var b strings.Builder
	for k, vals := range h {
		for _, v := range vals {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	return b.String()
}

func TestCredentialNames(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "Set-Cookie": true, "X-Api-Key": true,
		"ce-apikey": true, "X-Auth-Token": true, "Client-Secret": true, "X-Password": true, "x-pwd": true,
		"ce-id": false, "ce-source": false, "ce-type": false, "ce-specversion": false, "ce-datacontenttype": false,
		"ce-dataschema": false, "ce-subject": false, "ce-time": false, "ce-traceparent": false, "content-type": false,
		"Nats-Msg-Id": false, "Jido-Seq": false,
	} {
		if credentialName(name) != want {
			t.Errorf("credentialName(%q) = %v, want %v", name, !want, want)
		}
	}
}
