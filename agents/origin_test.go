package agents

import (
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"pgregory.net/rapid"

	"github.com/jido-bus/jido-bus/bus"
)

// oldOriginKey is OriginKey as it was, through hash/fnv.
func oldOriginKey(o Origin, agentID string) string {
	own := o.Source == "" || strings.HasPrefix(o.Source, "/agent/") && o.Source[len("/agent/"):] == agentID
	if own && len(o.ID) <= maxKeyID {
		return o.ID
	}
	h := fnv.New64a()
	h.Write([]byte(o.Source))
	h.Write([]byte{0})
	h.Write([]byte(o.ID))
	id := o.ID
	if len(id) > maxKeyID {
		cut := 40
		for cut > 0 && !utf8.RuneStart(id[cut]) {
			cut--
		}
		id = id[:cut]
	}
	return id + "~" + strconv.FormatUint(h.Sum64(), 36)
}

// TestDerivedID: the keys and ids derived in place are those hash/fnv and
// concatenation derived — they are in the log and in every emitted id.
func TestDerivedID(t *testing.T) {
	str := rapid.OneOf(rapid.StringN(0, 100, -1), rapid.StringMatching(`[a-z0-9/]{0,70}`), rapid.SampledFrom([]string{"", "/agent/a1", "/agent/", "bench"}))
	rapid.Check(t, func(t *rapid.T) {
		agentID := rapid.SampledFrom([]string{"a1", "team/w-2", ""}).Draw(t, "agent")
		o := Origin{ID: str.Draw(t, "id"), Source: str.Draw(t, "source")}
		if rapid.Bool().Draw(t, "own") {
			o.Source = "/agent/" + agentID
		}
		want := oldOriginKey(o, agentID)
		if got := OriginKey(o, agentID); got != want {
			t.Fatalf("OriginKey(%+v, %q) = %q, want %q", o, agentID, got, want)
		}
		index := rapid.IntRange(0, 1000).Draw(t, "index")
		base := want
		if o.ID == "" {
			base = agentID
		}
		if got, want := derivedID(o, agentID, index), DeriveID(base, index); got != want {
			t.Fatalf("derivedID = %q, want %q", got, want)
		}
	})
}

// TestOriginOf: the origin read from the signal's context is the one the
// sdk's getters give, for any source, time and extensions.
func TestOriginOf(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := rapid.SampledFrom([]string{"bench", "/agent/c1", "//h/p", "a:b", "https://u@h:1/p?q#f", "", "/x y", "*"}).Draw(t, "source")
		u, err := url.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		ec := &event.EventContextV1{ID: rapid.String().Draw(t, "id"), Type: rapid.String().Draw(t, "type"), Source: types.URIRef{URL: *u}}
		if rapid.Bool().Draw(t, "time") {
			ec.Time = &types.Timestamp{Time: time.Unix(rapid.Int64Range(0, 1e10).Draw(t, "sec"), 7)}
		}
		for _, name := range []string{bus.ExtCorrelationID, bus.ExtTraceParent, "other"} {
			switch rapid.IntRange(0, 2).Draw(t, name) {
			case 1:
				if ec.Extensions == nil {
					ec.Extensions = map[string]any{}
				}
				ec.Extensions[name] = rapid.String().Draw(t, name+"v")
			case 2:
				if ec.Extensions == nil {
					ec.Extensions = map[string]any{}
				}
				ec.Extensions[name] = int32(3)
			}
		}
		sig := bus.Signal{Context: ec}
		want := Origin{ID: sig.ID(), Source: sig.Source(), Type: sig.Type(), Time: sig.Time()}
		ext := sig.Extensions()
		want.CorrelationID, _ = ext[bus.ExtCorrelationID].(string)
		want.TraceParent, _ = ext[bus.ExtTraceParent].(string)
		if got := OriginOf(sig); got != want {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
}
