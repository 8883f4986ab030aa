package agents

import (
	"strconv"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/jsonenc"
)

// The log form of the built-in directives, written without reflection.
// The runtime encodes every directive of every decision (the counter's
// Emit on each signal), and encoding/json — reflecting over the
// directive, calling the sdk's MarshalJSON for its signal (a jsoniter
// stream), then compacting and HTML-escaping that output again — was 6%
// of a durable cast's CPU and 11 of its 53 allocations. appendLogForm
// writes the very bytes Encode writes through encoding/json: the same
// members in the same order, the same omissions, the same escapes
// (encoding/json's for the directive's own strings; jsoniter's followed
// by encoding/json's compaction for the signal's attributes and data).
// It declines (false) whatever it cannot reproduce exactly — a directive
// type of another package or given by pointer, a signal that is not a
// CloudEvents 1.0 context, a non-string extension, data that is not JSON,
// maps of any — and Encode then takes encoding/json's path, errors
// included. TestAppendLogForm and FuzzAppendLogForm hold the two to the
// same bytes.

// appendLogForm appends d's log form to b, or reports false and leaves
// b's contents past len(b) unspecified.
func appendLogForm(b []byte, d Directive) ([]byte, bool) {
	ok := true
	switch d := d.(type) {
	case Emit:
		b = append(b, `{"kind":"emit","signal":`...)
		if b, ok = AppendSignalJSON(b, &d.Signal); !ok {
			return b, false
		}
		if d.Dispatch != nil {
			b = append(b, `,"dispatch":`...)
			b = appendDispatch(b, d.Dispatch)
		}
	case Error:
		b = append(b, `{"kind":"error","error":`...)
		if d.Err == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, `{"type":`...)
			b = jsonenc.AppendString(b, d.Err.Type)
			b = append(b, `,"message":`...)
			b = jsonenc.AppendString(b, d.Err.Message)
			b = append(b, '}')
		}
		b = append(b, `,"context":`...)
		b = jsonenc.AppendString(b, d.Context)
		if d.Action != "" {
			b = append(b, `,"action":`...)
			b = jsonenc.AppendString(b, d.Action)
		}
	case Schedule:
		b = append(b, `{"kind":"schedule","delay_ms":`...)
		b = strconv.AppendInt(b, d.Delay.Milliseconds(), 10)
		b = append(b, `,"signal":`...)
		if b, ok = AppendSignalJSON(b, &d.Signal); !ok {
			return b, false
		}
	case ScheduleCancel:
		b = append(b, `{"kind":"schedule_cancel","signal_id":`...)
		b = jsonenc.AppendString(b, d.SignalID)
	case Cron:
		b = append(b, `{"kind":"cron","job_id":`...)
		b = jsonenc.AppendString(b, d.JobID)
		b = append(b, `,"expr":`...)
		b = jsonenc.AppendString(b, d.Expr)
		if d.Signal != nil {
			b = append(b, `,"signal":`...)
			if b, ok = AppendSignalJSON(b, d.Signal); !ok {
				return b, false
			}
		}
		if d.TZ != "" {
			b = append(b, `,"tz":`...)
			b = jsonenc.AppendString(b, d.TZ)
		}
	case CronCancel:
		b = append(b, `{"kind":"cron_cancel","job_id":`...)
		b = jsonenc.AppendString(b, d.JobID)
	case RunInstruction:
		b = append(b, `{"kind":"run_instruction","instruction":`...)
		if b, ok = appendInstruction(b, &d.Instruction); !ok {
			return b, false
		}
		if d.ResultAction != "" {
			b = append(b, `,"result_action":`...)
			b = jsonenc.AppendString(b, d.ResultAction)
		}
	case SpawnAgent:
		if len(d.Opts) > 0 || len(d.Meta) > 0 {
			return b, false // maps of any: encoding/json's business
		}
		b = append(b, `{"kind":"spawn_agent","type":`...)
		b = jsonenc.AppendString(b, d.Type)
		b = append(b, `,"tag":`...)
		b = jsonenc.AppendString(b, d.Tag)
		if d.Restart != "" {
			b = append(b, `,"restart":`...)
			b = jsonenc.AppendString(b, d.Restart)
		}
	case StopChild:
		b = append(b, `{"kind":"stop_child","tag":`...)
		b = jsonenc.AppendString(b, d.Tag)
		if d.Reason != "" {
			b = append(b, `,"reason":`...)
			b = jsonenc.AppendString(b, d.Reason)
		}
	case Stop:
		b = append(b, `{"kind":"stop"`...)
		if d.Reason != "" {
			b = append(b, `,"reason":`...)
			b = jsonenc.AppendString(b, d.Reason)
		}
	default:
		return b, false
	}
	return append(b, '}'), true
}

func appendDispatch(b []byte, d *Dispatch) []byte {
	b = append(b, `{"adapter":`...)
	b = jsonenc.AppendString(b, d.Adapter)
	if d.Target != "" {
		b = append(b, `,"target":`...)
		b = jsonenc.AppendString(b, d.Target)
	}
	if len(d.Options) > 0 {
		b = append(b, `,"options":{`...)
		for i, k := range sortedKeys(d.Options) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = jsonenc.AppendString(b, d.Options[k])
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Insertion sort: options are a handful of entries.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// appendInstruction writes in as encoding/json does (Instruction's tags).
func appendInstruction(b []byte, in *Instruction) ([]byte, bool) {
	b = append(b, `{"action":`...)
	b = jsonenc.AppendString(b, in.Action)
	if len(in.Params) > 0 {
		var ok bool
		b = append(b, `,"params":`...)
		if b, ok = jsonenc.AppendRaw(b, in.Params); !ok {
			return b, false
		}
	}
	// omitzero on a struct without an IsZero method: every field zero.
	if o := &in.Origin; *o != (Origin{}) {
		b = append(b, `,"origin":{`...)
		n := len(b)
		b = appendMember(b, n, "id", o.ID)
		b = appendMember(b, n, "source", o.Source)
		b = appendMember(b, n, "type", o.Type)
		if !o.Time.IsZero() {
			t, err := o.Time.MarshalJSON()
			if err != nil {
				return b, false // a year past 9999: encoding/json's error
			}
			if len(b) > n {
				b = append(b, ',')
			}
			b = append(b, `"time":`...)
			b = append(b, t...)
		}
		b = appendMember(b, n, "correlationid", o.CorrelationID)
		b = appendMember(b, n, "traceparent", o.TraceParent)
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendMember writes the omitempty string member name: v after a comma
// unless it is the first member of the object begun at b[:start].
func appendMember(b []byte, start int, name, v string) []byte {
	if v == "" {
		return b
	}
	if len(b) > start {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return jsonenc.AppendString(b, v)
}

// AppendSignalJSON appends s as encoding/json writes a bus.Signal: the
// sdk's MarshalJSON (event.WriteJson) compacted with HTML escaping. It
// reports false, b's contents past len(b) then unspecified, for a signal
// it cannot write exactly so (see appendLogForm); a LogFormAppender then
// declines too.
func AppendSignalJSON(b []byte, s *bus.Signal) ([]byte, bool) {
	ec, ok := s.Context.(*event.EventContextV1)
	if !ok || ec == nil || ec.DataSchema != nil {
		return b, false
	}
	b = append(b, `{"specversion":"1.0","id":`...)
	b = appendSignalString(b, ec.ID)
	b = append(b, `,"source":`...)
	b = appendSignalString(b, sourceString(ec.Source))
	b = append(b, `,"type":`...)
	b = appendSignalString(b, ec.Type)
	if ec.Subject != nil {
		b = append(b, `,"subject":`...)
		b = appendSignalString(b, *ec.Subject)
	}
	if ec.DataContentType != nil {
		b = append(b, `,"datacontenttype":`...)
		b = appendSignalString(b, *ec.DataContentType)
	}
	if ec.Time != nil {
		// types.Timestamp.String: RFC 3339 in UTC, nothing to escape.
		b = append(b, `,"time":"`...)
		b = ec.Time.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	if s.DataEncoded != nil {
		// Written as JSON when the media type is JSON and the data not
		// base64; the other media types stay with the sdk.
		if s.DataBase64 || ec.DataContentType != nil && *ec.DataContentType != event.ApplicationJSON {
			return b, false
		}
		b = append(b, `,"data":`...)
		if b, ok = jsonenc.AppendRaw(b, s.DataEncoded); !ok {
			return b, false
		}
	}
	if len(ec.Extensions) > 0 {
		// Sorted by name, as the sdk writes them; only string values.
		var names [8]string
		if len(ec.Extensions) > len(names) {
			return b, false
		}
		n := 0
		for k := range ec.Extensions {
			j := n
			for ; j > 0 && names[j-1] > k; j-- {
				names[j] = names[j-1]
			}
			names[j] = k
			n++
		}
		for _, k := range names[:n] {
			v, ok := ec.Extensions[k].(string)
			if !ok {
				return b, false
			}
			b = append(b, ',')
			b = appendSignalString(b, k)
			b = append(b, ':')
			b = appendSignalString(b, v)
		}
	}
	return append(b, '}'), true
}

// sourceString returns u.String() without building it again for the
// source nearly every signal has, a plain path such as "/agent/c1":
// url.URL.String() of a URL that is only a Path of unreserved characters
// and '/' (not starting with "//", which would read as an authority) is
// that Path.
func sourceString(u types.URIRef) string {
	path := u.URL.Path
	u.URL.Path = ""
	if u == (types.URIRef{}) && plainSourcePath(path) {
		return path
	}
	u.URL.Path = path
	return u.String()
}

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

const hexDigits = "0123456789abcdef"

// signalSafe holds the bytes appendSignalString copies as they are: from
// ' ' up, except '"', '\\', the HTML characters and 0xE2, which may
// begin U+2028 or U+2029. (The other strings of the log form are
// encoding/json's, jsonenc.AppendString: invalid UTF-8 replaced, \b and
// \f short — not the sdk's.)
var signalSafe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		switch c {
		case '"', '\\', '<', '>', '&', 0xE2:
		default:
			t[c] = true
		}
	}
	return t
}()

// appendSignalString writes s as the sdk's jsoniter stream does
// (ConfigFastest: no HTML escaping, bytes past ASCII copied as they are,
// valid UTF-8 or not) followed by encoding/json's compaction of that
// output, which escapes '<', '>', '&' and the bytes of U+2028 and U+2029.
func appendSignalString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case signalSafe[c]:
			i++
			continue
		case c == 0xE2:
			if i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8 {
				b = append(b, s[start:i]...)
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
				i += 3
				start = i
			} else {
				i++
			}
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default: // other control bytes, and < > & (encoding/json's compaction)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
