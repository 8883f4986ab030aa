package eventlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/jido-bus/jido-bus/bus"
)

// formatV1 is the first byte of every entry value written by this package.
const formatV1 = 1

// headerLen is format + crc32c + gseq + seq + commit time.
const headerLen = 1 + 4 + 8 + 8 + 8

const (
	flagTime       = 1 << 0
	flagDataBase64 = 1 << 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Entry is one committed event and its position in the log.
//
// An Entry handed out by this package owns its memory: nothing in it is
// reused or changed by the Log afterwards, so callers may keep it.
type Entry struct {
	Stream    string
	Seq       uint64    // the stream's version after this entry, from 1
	GlobalSeq uint64    // position in the global order, from 1
	Time      time.Time // commit time (UTC), set by the Log
	Event     bus.Signal
	// Size is the encoded size of the entry value in bytes, as stored.
	Size int
}

// errShort is what the decoder reports for a value that ends too early.
var errShort = errors.New("value is truncated")

// encodeEntry appends the format-1 value of ev at the given position to
// dst. The event must have passed bus.ValidateSignal.
func encodeEntry(dst []byte, stream string, seq, gseq uint64, commit time.Time, ev *bus.Signal) []byte {
	start := len(dst)
	dst = appendEntryBody(dst, stream, ev)
	setHeader(dst[start:], gseq, seq, commit)
	return dst
}

// appendEntryBody appends the format-1 value of ev to dst with a zero
// header (checksum, position and commit time), which setHeader fills in
// once they are known; the body is checksummed only then, once.
func appendEntryBody(dst []byte, stream string, ev *bus.Signal) []byte {
	return appendEntryBodyOf(dst, stream, ev.ID(), ev.Source(), ev)
}

// appendEntryBodyOf is appendEntryBody for a caller that has read the
// event's id and source already (reading the source formats a URL).
func appendEntryBodyOf(dst []byte, stream, id, source string, ev *bus.Signal) []byte {
	var hdr [headerLen]byte
	hdr[0] = formatV1
	dst = append(dst, hdr[:]...)
	var flags byte
	evTime := ev.Time()
	if !evTime.IsZero() {
		flags |= flagTime
	}
	if ev.DataBase64 {
		flags |= flagDataBase64
	}
	dst = append(dst, flags)
	dst = appendString(dst, stream)
	dst = appendString(dst, id)
	dst = appendString(dst, source)
	dst = appendString(dst, ev.Type())
	dst = appendString(dst, ev.Subject())
	dst = appendString(dst, ev.DataContentType())
	dst = appendString(dst, ev.DataSchema())
	if flags&flagTime != 0 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(evTime.UnixNano()))
	}
	ext := ev.Extensions()
	dst = binary.AppendUvarint(dst, uint64(len(ext)))
	if len(ext) > 0 {
		names := make([]string, 0, len(ext))
		for name := range ext {
			names = append(names, name)
		}
		sort.Strings(names) // deterministic bytes for identical events
		for _, name := range names {
			v, _ := types.Format(ext[name]) // validated events hold only formattable values
			dst = appendString(dst, name)
			dst = appendString(dst, v)
		}
	}
	return append(dst, ev.Data()...)
}

// setHeader fills in the position and commit time of an encoded value and
// its checksum.
func setHeader(v []byte, gseq, seq uint64, commit time.Time) {
	binary.BigEndian.PutUint64(v[5:], gseq)
	binary.BigEndian.PutUint64(v[13:], seq)
	binary.BigEndian.PutUint64(v[21:], uint64(commit.UnixNano()))
	binary.BigEndian.PutUint32(v[1:], crc32.Checksum(v[5:], castagnoli))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// valueHeader is the fixed part of a value, read without decoding the
// event.
type valueHeader struct {
	gseq, seq uint64
	commit    int64
}

// checkValue verifies the format byte and checksum of v and returns its
// header.
func checkValue(v []byte) (valueHeader, error) {
	if len(v) < headerLen {
		return valueHeader{}, errShort
	}
	if v[0] != formatV1 {
		return valueHeader{}, fmt.Errorf("unknown value format %d", v[0])
	}
	if got, want := crc32.Checksum(v[5:], castagnoli), binary.BigEndian.Uint32(v[1:5]); got != want {
		return valueHeader{}, fmt.Errorf("checksum mismatch: stored %08x, computed %08x", want, got)
	}
	return valueHeader{
		gseq:   binary.BigEndian.Uint64(v[5:]),
		seq:    binary.BigEndian.Uint64(v[13:]),
		commit: int64(binary.BigEndian.Uint64(v[21:])),
	}, nil
}

// peeked is what peek reads of a stored value: its header, and its stream
// and event type as views of the value, valid while it is.
type peeked struct {
	valueHeader
	stream, typ string
}

// peek reads the header, stream and event type of a stored value without
// decoding the rest, for scans that filter by type. ok is false when v
// does not check out (its checksum, or its layout up to the type): decode
// then says why.
func peek(v []byte) (p peeked, ok bool) {
	h, err := checkValue(v)
	if err != nil {
		return p, false
	}
	r := reader{b: v, off: headerLen}
	r.byte() // flags
	stream := r.span()
	r.span() // id
	r.span() // source
	typ := r.span()
	if r.err != nil || stream.n == 0 || typ.n == 0 {
		return p, false
	}
	return peeked{valueHeader: h, stream: unsafe.String(&v[stream.off], stream.n), typ: unsafe.String(&v[typ.off], typ.n)}, true
}

// decodedContext is an event context with the values it points to, so
// that the decoder allocates them together.
type decodedContext struct {
	ctx                  event.EventContextV1
	time                 types.Timestamp
	subject, contentType string
}

// decoder turns stored values into Entries. It remembers the last two
// sources it parsed, because parsing a URI reference costs more than the
// rest of the decode and a stream's events mostly share few sources: an
// agent's stream alternates the source of the signals it receives and its
// own, on its cmd records. A decoder is used by one goroutine.
type decoder struct {
	sources [2]parsedSource
	older   int // the index in sources to replace next
}

// parsedSource is a source attribute and its parsed form.
type parsedSource struct {
	raw string
	uri types.URIRef
}

// source returns src parsed, from the two last parsed when it is one of
// them. src may be a view of an entry's buffer.
func (d *decoder) source(src string) (types.URIRef, error) {
	for i := range d.sources {
		if p := &d.sources[i]; p.raw == src && src != "" {
			d.older = 1 - i
			return p.uri, nil
		}
	}
	u, err := url.Parse(src)
	if err != nil {
		return types.URIRef{}, err
	}
	d.sources[d.older] = parsedSource{raw: strings.Clone(src), uri: types.URIRef{URL: *u}}
	d.older = 1 - d.older
	return types.URIRef{URL: *u}, nil
}

// decode verifies and decodes v. The Entry does not alias v.
func (d *decoder) decode(v []byte) (Entry, error) {
	h, err := checkValue(v)
	if err != nil {
		return Entry{}, err
	}
	return d.decodeChecked(v, h)
}

// decodeChecked decodes v, whose header checkValue has returned as h.
func (d *decoder) decodeChecked(v []byte, h valueHeader) (Entry, error) {
	r := reader{b: v, off: headerLen}
	flags := r.byte()
	strStart := r.off
	stream, id, source, typ := r.span(), r.span(), r.span(), r.span()
	subject, contentType, schema := r.span(), r.span(), r.span()
	var evTime int64
	if flags&flagTime != 0 {
		evTime = int64(r.uint64())
	}
	next := r.uvarint()
	if r.err == nil && next > uint64(len(v)) {
		r.fail() // each extension takes at least two bytes; bounds the allocation
	}
	var extArr [8]span // on the stack for up to four extensions
	extSpans := extArr[:0]
	if r.err == nil && next > 0 {
		if 2*next > uint64(len(extArr)) {
			extSpans = make([]span, 0, 2*next)
		}
		for i := uint64(0); i < 2*next && r.err == nil; i++ {
			extSpans = append(extSpans, r.span())
		}
	}
	if r.err != nil {
		return Entry{}, r.err
	}
	if flags&^(flagTime|flagDataBase64) != 0 {
		return Entry{}, fmt.Errorf("unknown flags %#x", flags)
	}
	// The strings and the data of the value share one copy of its
	// variable part: the strings are views of the bytes before the data,
	// which nothing hands out as a slice, so they never change; the data
	// is the rest, capped so that an append to it reallocates.
	buf := make([]byte, len(v)-strStart)
	copy(buf, v[strStart:])
	str := func(s span) string {
		if s.n == 0 {
			return ""
		}
		return unsafe.String(&buf[s.off-strStart], s.n)
	}
	// The event context and what it points to are one allocation.
	a := &decodedContext{}
	ctx := &a.ctx
	ctx.ID, ctx.Type = str(id), str(typ)
	if len(extSpans) > 0 {
		ext := make(map[string]any, len(extSpans)/2)
		for i := 0; i < len(extSpans); i += 2 {
			ext[str(extSpans[i])] = str(extSpans[i+1])
		}
		ctx.Extensions = ext
	}
	var err error
	if ctx.Source, err = d.source(str(source)); err != nil {
		return Entry{}, fmt.Errorf("source %q: %w", str(source), err)
	}
	if subject.n > 0 {
		a.subject = str(subject)
		ctx.Subject = &a.subject
	}
	if contentType.n > 0 {
		a.contentType = str(contentType)
		ctx.DataContentType = &a.contentType
	}
	if schema.n > 0 {
		u, err := url.Parse(str(schema))
		if err != nil {
			return Entry{}, fmt.Errorf("dataschema %q: %w", str(schema), err)
		}
		ctx.DataSchema = &types.URI{URL: *u}
	}
	if flags&flagTime != 0 {
		a.time = types.Timestamp{Time: time.Unix(0, evTime).UTC()}
		ctx.Time = &a.time
	}
	e := Entry{
		Stream:    str(stream),
		Seq:       h.seq,
		GlobalSeq: h.gseq,
		Time:      time.Unix(0, h.commit).UTC(),
		Event:     event.Event{Context: ctx, DataBase64: flags&flagDataBase64 != 0},
		Size:      len(v),
	}
	if r.off < len(v) {
		e.Event.DataEncoded = buf[r.off-strStart : len(buf) : len(buf)]
	}
	return e, nil
}

// decodeIdentity reads only the stream, id and source of a verified value,
// which retention needs to remove idempotency keys.
func decodeIdentity(v []byte) (stream, id, source string, err error) {
	if _, err := checkValue(v); err != nil {
		return "", "", "", err
	}
	r := reader{b: v, off: headerLen + 1}
	stream = string(r.bytes())
	id = string(r.bytes())
	source = string(r.bytes())
	return stream, id, source, r.err
}

// reader reads the variable part of a value; the first failure sticks.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errShort
	}
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail()
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) uint64() uint64 {
	if r.err != nil || len(r.b)-r.off < 8 {
		r.fail()
		return 0
	}
	r.off += 8
	return binary.BigEndian.Uint64(r.b[r.off-8:])
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

// span is where a length-prefixed string lies in the value.
type span struct{ off, n int }

func (r *reader) span() span {
	b := r.bytes()
	return span{off: r.off - len(b), n: len(b)}
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || uint64(len(r.b)-r.off) < n {
		r.fail()
		return nil
	}
	r.off += int(n)
	return r.b[r.off-int(n) : r.off]
}
