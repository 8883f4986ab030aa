package natsbus

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// Headers a dead letter carries besides the original message's own.
const (
	HeaderDLQReason  = "jido-dlq-reason"  // the machine word, as in the subject
	HeaderDLQError   = "jido-dlq-error"   // the message for a person
	HeaderDLQSubject = "jido-dlq-subject" // where the original was published
	HeaderDLQTime    = "jido-dlq-time"    // when it was refused, RFC 3339
	// Set only on a dead letter whose body was cut to fit the server's
	// max payload: "true", the original body's size in bytes and its
	// sha256 in hex.
	HeaderDLQTruncated = "jido-dlq-truncated"
	HeaderDLQSize      = "jido-dlq-size"
	HeaderDLQSHA256    = "jido-dlq-sha256"
	// Set on a dead letter whose body is withheld (see DeadLetter.Withheld),
	// with HeaderDLQSize and HeaderDLQSHA256.
	HeaderDLQWithheld = "jido-dlq-withheld"
)

// DeadLetterType is the CloudEvents type of a dead letter in the log.
const DeadLetterType = "jido.deadletter"

// DeadLetter is a refused input: the original subject, headers and bytes,
// and why it was refused. A header that carries a credential
// (Authorization, Cookie, X-Api-Key, ce-apikey, anything named like a
// token, key, secret or password) keeps its name and has its value
// replaced by a keyed digest (DigestPrefix…), and so has such an attribute
// of a structured event's body: dead letters are read by operators and
// published on <prefix>.dlq.<reason>, and a credential must not reach
// either. A dead letter too large to store whole is
// stored truncated: Truncated is set, Data is a prefix of the original
// body, and Size and SHA256 describe the whole of it; when even the
// headers do not fit, Header is dropped and HeaderBytes says how large
// it was. The body of an input refused as forbidden is not kept at all:
// Withheld is set, Data is empty, and Size and SHA256 describe it, for
// such an input may carry what must not be stored (an inline secret).
type DeadLetter struct {
	Reason      string      `json:"reason"`
	Error       string      `json:"error"`
	Subject     string      `json:"subject"`
	Header      nats.Header `json:"header,omitempty"`
	Data        []byte      `json:"data,omitempty"` // encoded as base64 in JSON
	Time        time.Time   `json:"time"`
	Truncated   bool        `json:"truncated,omitempty"`
	Withheld    bool        `json:"withheld,omitempty"`
	Size        int         `json:"size,omitempty"`
	SHA256      string      `json:"sha256,omitempty"`
	HeaderBytes int         `json:"header_bytes,omitempty"`
}

// maxSubjectAttr bounds the subject attribute of a dead letter's signal
// (the record's data keeps the subject whole).
const maxSubjectAttr = 1024

// Signal returns the dead letter as a CloudEvent of type DeadLetterType, the
// form in which it is appended to the log stream "dlq". The signal fits
// lim, the log's limits, whatever the input was: a dead letter that is
// never stored is one lost, so one that would not fit is truncated (see
// DeadLetter) rather than refused, and the subject attribute is made a
// CloudEvents string.
func (d DeadLetter) Signal(lim bus.Limits) bus.Signal {
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetID(bus.NewID())
	s.SetSource("jido-bus:dlq")
	s.SetType(DeadLetterType)
	if sub := attributeText(d.Subject, maxSubjectAttr); sub != "" {
		s.SetSubject(sub)
	}
	s.SetTime(d.Time)
	s.DataEncoded = d.fit(lim.DataLimit())
	s.SetDataContentType("application/json")
	return s
}

// fit returns d as JSON in at most max bytes (max < 0: no limit),
// truncating the data, then dropping the headers, then shortening the
// error message, as far as it must.
func (d DeadLetter) fit(max int) []byte {
	body := marshal(d)
	if max < 0 || len(body) <= max {
		return body
	}
	full := d.Data
	sum := sha256.Sum256(full)
	d.Truncated, d.Size, d.SHA256 = true, len(full), hex.EncodeToString(sum[:])
	d.Data = nil
	fixed := marshal(d)
	if len(fixed) > max && d.Header != nil {
		d.HeaderBytes = headerBytes(d.Header)
		d.Header = nil
		fixed = marshal(d)
	}
	if len(fixed) > max {
		d.Error = bus.Excerpt(d.Error)
		d.Subject = bus.Excerpt(d.Subject)
		fixed = marshal(d)
	}
	// Room for the data member: `,"data":"…"` around its base64.
	room := max - len(fixed) - len(`,"data":""`)
	if keep := base64.StdEncoding.DecodedLen(room); keep > 0 {
		d.Data = full[:min(keep, len(full))]
		return marshal(d)
	}
	return fixed
}

func marshal(d DeadLetter) []byte {
	body, err := json.Marshal(d)
	if err != nil { // a DeadLetter is strings, bytes, numbers and a time
		panic(err)
	}
	return body
}

func headerBytes(h nats.Header) int {
	n := 0
	for k, vals := range h {
		for _, v := range vals {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return n
}

// attributeText makes v a CloudEvents string of at most max bytes:
// invalid UTF-8 and control characters become U+FFFD.
func attributeText(v string, max int) string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, strings.ToValidUTF8(v, "\uFFFD"))
	if len(v) > max {
		cut := max
		for cut > 0 && !isRuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	return v
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// deadLetter files msg under the reason of err: it publishes the original
// body and headers on <prefix>.dlq.<reason> and hands the record to
// Options.OnDeadLetter.
func (b *Bus) deadLetter(msg *nats.Msg, err error) {
	e := bus.AsError(err)
	header := redactHeader(msg.Header, b.opts.DigestKey)
	data := redactStructured(msg.Header, msg.Data, b.opts.DigestKey)
	d := DeadLetter{
		Reason:  e.Type,
		Error:   e.Message,
		Subject: msg.Subject,
		Header:  header,
		Data:    data,
		Time:    b.now().UTC(),
	}
	out := &nats.Msg{Subject: b.opts.Subjects.DLQ(d.Reason), Data: data, Header: maps.Clone(header)}
	if out.Header == nil {
		out.Header = nats.Header{}
	}
	if d.Reason == bus.ReasonForbidden {
		sum := sha256.Sum256(msg.Data)
		d.Withheld, d.Size, d.SHA256, d.Data = true, len(msg.Data), hex.EncodeToString(sum[:]), nil
		out.Data = nil
		out.Header.Set(HeaderDLQWithheld, "true")
		out.Header.Set(HeaderDLQSize, strconv.Itoa(d.Size))
		out.Header.Set(HeaderDLQSHA256, d.SHA256)
	}
	out.Header.Set(HeaderDLQReason, d.Reason)
	out.Header.Set(HeaderDLQError, d.Error)
	out.Header.Set(HeaderDLQSubject, d.Subject)
	out.Header.Set(HeaderDLQTime, d.Time.Format(time.RFC3339Nano))
	fitPayload(out, b.nc.MaxPayload())
	b.log.Warn("dead letter", "reason", d.Reason, "error", d.Error, "subject", d.Subject)
	// Counted first: whoever receives the dead letter then sees it counted.
	b.metrics.deadLetters.Add(1)
	if pubErr := b.nc.PublishMsg(out); pubErr != nil {
		b.log.Error("publish dead letter", "subject", out.Subject, "err", pubErr)
	}
	if b.opts.OnDeadLetter != nil {
		b.opts.OnDeadLetter(d)
	}
}

// headerSlack is room for the header block's framing ("NATS/1.0\r\n",
// the closing "\r\n") and the truncation headers fitPayload adds.
const headerSlack = 256

// fitPayload cuts out's body so that the message fits the server's max
// payload (headers count towards it): the input it refuses may have
// filled it, and the dead-letter headers make it larger. A cut body is
// said so in headers with the original's size and sha256; when the
// original's own headers leave no room, they are dropped.
func fitPayload(out *nats.Msg, maxPayload int64) {
	hb := headerBytes(out.Header) + headerSlack
	if maxPayload <= 0 || int64(hb+len(out.Data)) <= maxPayload {
		return
	}
	sum := sha256.Sum256(out.Data)
	if int64(hb) > maxPayload/2 {
		keep := nats.Header{}
		for _, k := range []string{HeaderDLQReason, HeaderDLQSubject, HeaderDLQTime} {
			keep.Set(k, out.Header.Get(k))
		}
		keep.Set(HeaderDLQError, bus.Excerpt(out.Header.Get(HeaderDLQError)))
		out.Header = keep
		hb = headerBytes(out.Header) + headerSlack
	}
	out.Header.Set(HeaderDLQTruncated, "true")
	out.Header.Set(HeaderDLQSize, strconv.Itoa(len(out.Data)))
	out.Header.Set(HeaderDLQSHA256, hex.EncodeToString(sum[:]))
	keep := max(0, int(maxPayload)-hb)
	out.Data = out.Data[:min(keep, len(out.Data))]
}
