package runtime

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// The cmd record is written once per signal an agent accepts, so it is
// encoded by hand: the same bytes encoding/json writes for cmdRecord
// (members in declaration order, omitempty honoured, HTML-safe escaping),
// without reflection, and the record's CloudEvent built without parsing
// its constant source again. TestCmdRecordEncoding holds the two to the
// same bytes.

// recordSourceURL is recordSource, parsed once.
var recordSourceURL = func() url.URL {
	u, err := url.Parse(recordSource)
	if err != nil {
		panic(err)
	}
	return *u
}()

// cmdRecordOf builds the cmd record of the decision on sig: version is
// the agent's version after it, carried the outcomes it records. It is
// the part of deciding a signal that the runtime adds to agents.Step, so
// BenchmarkDecide measures the two together. The directives' log form is
// written straight into the record's data (DirectiveCodec.AppendAll), and
// the record's attributes share one allocation: three allocations in all,
// where building a cmdRecord, encoding the directives on their own and
// copying them into the record took 18 (BenchmarkDecide).
func cmdRecordOf(codec *agents.DirectiveCodec, sig *bus.Signal, version uint64, now time.Time, directives []agents.Directive, carried []effectResult) (bus.Signal, error) {
	scratch := recordScratch.Get().(*[]byte)
	defer putRecordScratch(scratch)
	b := appendCmdRecordHead((*scratch)[:0], sig.ID(), version)
	b, err := codec.AppendAll(b, directives)
	if err != nil {
		return bus.Signal{}, err
	}
	count := len(directives)
	b = appendCmdRecordTail(b, &count, carried)
	*scratch = b
	// The record's own data, exactly as long as it is: the log keeps it
	// until the append is done, the scratch goes back to the pool.
	data := make([]byte, len(b))
	copy(data, b)
	return cmdRecordEvent(cmdRecordID(sig), now, data), nil
}

// recordScratch holds the buffers cmd records are written in before
// being copied out at their size: the size of a decision's log form is
// known only once written, and guessing it made the record's data grow
// (twice its size, a second allocation) or waste room.
var recordScratch = sync.Pool{New: func() any { return new(make([]byte, 0, 1024)) }}

func putRecordScratch(b *[]byte) {
	if cap(*b) <= 64<<10 { // a huge decision's buffer is not kept
		recordScratch.Put(b)
	}
}

// cmdRecordSignal builds the TypeCmd record of cr.
func cmdRecordSignal(id string, at time.Time, cr *cmdRecord) bus.Signal {
	data := appendCmdRecord(make([]byte, 0, 64+len(cr.Directives)+48*len(cr.Effects)), cr)
	return cmdRecordEvent(id, at, data)
}

// cmdRecordAttrs holds a cmd record's attributes, one allocation.
type cmdRecordAttrs struct {
	ctx  event.EventContextV1
	time types.Timestamp
	ct   string
}

// cmdRecordEvent returns the TypeCmd record with data, as record would
// build it.
func cmdRecordEvent(id string, at time.Time, data []byte) bus.Signal {
	a := &cmdRecordAttrs{ct: event.ApplicationJSON, time: types.Timestamp{Time: at}}
	a.ctx = event.EventContextV1{
		ID:              strings.TrimSpace(id), // as SetID would
		Source:          types.URIRef{URL: recordSourceURL},
		Type:            TypeCmd,
		Time:            &a.time,
		DataContentType: &a.ct,
	}
	return bus.Signal{Context: &a.ctx, DataEncoded: data}
}

func appendCmdRecord(b []byte, cr *cmdRecord) []byte {
	b = appendCmdRecordHead(b, cr.Signal, cr.Version)
	if len(cr.Directives) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, cr.Directives...)
	}
	return appendCmdRecordTail(b, cr.Count, cr.Effects)
}

// appendCmdRecordHead writes a cmd record up to its directives.
func appendCmdRecordHead(b []byte, signal string, version uint64) []byte {
	b = append(b, `{"signal":`...)
	b = appendJSONString(b, signal)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, version, 10)
	return append(b, `,"directives":`...)
}

// appendCmdRecordTail writes a cmd record after its directives.
func appendCmdRecordTail(b []byte, count *int, effects []effectResult) []byte {
	if count != nil {
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(*count), 10)
	}
	if len(effects) > 0 {
		b = append(b, `,"effects":[`...)
		for i := range effects {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendEffectResult(b, &effects[i])
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendEffectResult(b []byte, r *effectResult) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendUint(b, r.Version, 10)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(r.Index), 10)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, r.Kind)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, r.Outcome)
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, r.Error)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string. Plain printable ASCII —
// every id, kind and outcome in practice — is copied as is; anything else
// goes through encoding/json, so the escaping is always exactly its own.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// decodeCmdRecord reads a cmd record. The layout appendCmdRecord writes is
// read directly, without reflection (recovery reads one per signal);
// anything else — a record with escapes in a string, one written by an
// older version — goes through encoding/json.
func decodeCmdRecord(data []byte, cr *cmdRecord) error {
	r := recordReader{b: data}
	if r.cmdRecord(cr) {
		return nil
	}
	*cr = cmdRecord{}
	return json.Unmarshal(data, cr)
}

// recordReader reads the records appendCmdRecord writes; each method
// reports false at the first byte it does not expect.
type recordReader struct {
	b []byte
	i int
}

func (r *recordReader) lit(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// str reads a string without escapes.
func (r *recordReader) str() (string, bool) {
	if !r.lit(`"`) {
		return "", false
	}
	start := r.i
	for ; r.i < len(r.b); r.i++ {
		switch c := r.b[r.i]; {
		case c == '"':
			s := string(r.b[start:r.i])
			r.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return "", false // escapes and non-ASCII: encoding/json decides
		}
	}
	return "", false
}

func (r *recordReader) uint() (uint64, bool) {
	start := r.i
	for r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' {
		r.i++
	}
	if r.i == start || r.i-start > 1 && r.b[start] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(r.b[start:r.i]), 10, 64)
	return n, err == nil
}

func (r *recordReader) int() (int, bool) {
	neg := r.lit("-")
	n, ok := r.uint()
	if !ok || n > math.MaxInt {
		return 0, false
	}
	if neg {
		return -int(n), true
	}
	return int(n), true
}

func (r *recordReader) cmdRecord(cr *cmdRecord) bool {
	var ok bool
	if !r.lit(`{"signal":`) {
		return false
	}
	if cr.Signal, ok = r.str(); !ok || !r.lit(`,"version":`) {
		return false
	}
	if cr.Version, ok = r.uint(); !ok || !r.lit(`,"directives":`) {
		return false
	}
	end, ok := bus.JSONValueEnd(r.b, r.i)
	if !ok {
		return false
	}
	if raw := r.b[r.i:end]; string(raw) != "null" {
		cr.Directives = bytes.Clone(raw)
	}
	r.i = end
	if r.lit(`,"count":`) {
		n, ok := r.int()
		if !ok {
			return false
		}
		cr.Count = &n
	}
	if r.lit(`,"effects":[`) {
		for {
			var e effectResult
			if !r.effectResult(&e) {
				return false
			}
			cr.Effects = append(cr.Effects, e)
			if r.lit(`]`) {
				break
			}
			if !r.lit(`,`) {
				return false
			}
		}
	}
	return r.lit(`}`) && r.i == len(r.b)
}

func (r *recordReader) effectResult(e *effectResult) bool {
	var ok bool
	if !r.lit(`{"version":`) {
		return false
	}
	if e.Version, ok = r.uint(); !ok || !r.lit(`,"index":`) {
		return false
	}
	if e.Index, ok = r.int(); !ok || !r.lit(`,"kind":`) {
		return false
	}
	if e.Kind, ok = r.str(); !ok || !r.lit(`,"outcome":`) {
		return false
	}
	if e.Outcome, ok = r.str(); !ok {
		return false
	}
	if r.lit(`,"error":`) {
		if e.Error, ok = r.str(); !ok {
			return false
		}
	}
	return r.lit(`}`)
}

// signalSource returns sig.Source() without building the string again for
// the source nearly every signal has, a plain path or name such as
// "/agent/c1": the sdk's String of a URL that is only such a Path is the
// Path (agents' log-form encoder reads sources the same way, and
// TestSignalSource holds this one to the sdk's).
func signalSource(sig *bus.Signal) string {
	if ec, ok := sig.Context.(*event.EventContextV1); ok && ec != nil {
		if u := &ec.Source.URL; *u == (url.URL{Path: u.Path}) && plainSourcePath(u.Path) {
			return u.Path
		}
	}
	return sig.Source()
}

// plainSourcePath reports whether p is made of unreserved characters and
// '/' only, and does not start with "//" (which would read as an
// authority): what url.URL.String writes unchanged.
func plainSourcePath(p string) bool {
	if p == "" || len(p) > 1 && p[0] == '/' && p[1] == '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '/':
		default:
			return false
		}
	}
	return true
}
