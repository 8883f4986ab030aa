package runtime

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// The fold reads a cmd record for every signal it refolds and an effects
// record for every few, so it reads the layouts the runtime writes
// (appendCmdRecord; record's encoding/json of effectsRecord) directly,
// into memory it reuses from one record to the next: decodeCmdRecord
// copies the directives and allocates the count, and encoding/json's
// reflection took 7% of BenchmarkRecover's CPU for the effects records
// alone. Anything else — escapes in a string, a record an older version
// wrote — goes through decodeCmdRecord or encoding/json, so what the
// fold reads is always what they read (TestFoldRecordDecoding).

// foldRecords is the memory the fold's record readers reuse.
type foldRecords struct {
	cr      cmdRecord      // the last cmd record read
	count   int            // what cr.Count points to
	results []effectResult // the last effects record's results
}

// foldRecordsPool holds readers that folds are done with, emptied, for
// the next: growing the results anew for every agent restored was 5% of
// the bytes BenchmarkRecover allocated.
var foldRecordsPool = sync.Pool{New: func() any { return new(foldRecords) }}

// pooledFoldRecords returns an empty reader, to be released when its fold
// is done.
func pooledFoldRecords() *foldRecords { return foldRecordsPool.Get().(*foldRecords) }

// release empties r and gives it back; nothing it returned may be used
// after. Readers that grew for very large records are left to the
// collector.
func (r *foldRecords) release() {
	results, effects := r.results[:cap(r.results)], r.cr.Effects[:cap(r.cr.Effects)]
	clear(results)
	clear(effects)
	*r = foldRecords{results: results[:0], cr: cmdRecord{Effects: effects[:0]}}
	if cap(results) <= maxPooledResults && cap(effects) <= maxPooledResults {
		foldRecordsPool.Put(r)
	}
}

const maxPooledResults = 4096

// cmd reads the cmd record data into r.cr and returns it; it stays valid
// until the next call. Its directives are a view of data, which the
// caller must not change while it uses them. id is the id of the signal
// the fold expects the record to decide; when the record names it, the
// record's Signal is id itself instead of a copy.
func (r *foldRecords) cmd(data []byte, id string) (*cmdRecord, error) {
	results := r.cr.Effects[:0]
	r.cr = cmdRecord{}
	if r.readCmd(data, id, results) {
		return &r.cr, nil
	}
	r.cr = cmdRecord{}
	if err := decodeCmdRecord(data, &r.cr); err != nil {
		return nil, err
	}
	return &r.cr, nil
}

func (r *foldRecords) readCmd(data []byte, id string, results []effectResult) bool {
	rd := recordReader{b: data}
	if !rd.lit(`{"signal":`) {
		return false
	}
	signal, ok := rd.plain()
	if !ok || !rd.lit(`,"version":`) {
		return false
	}
	if string(signal) == id {
		r.cr.Signal = id
	} else {
		r.cr.Signal = string(signal)
	}
	if r.cr.Version, ok = rd.uint(); !ok || !rd.lit(`,"directives":`) {
		return false
	}
	end, ok := bus.JSONValueEnd(rd.b, rd.i)
	if !ok {
		return false
	}
	if raw := rd.b[rd.i:end:end]; string(raw) != "null" {
		r.cr.Directives = raw
	}
	rd.i = end
	if rd.lit(`,"count":`) {
		if r.count, ok = rd.int(); !ok {
			return false
		}
		r.cr.Count = &r.count
	}
	if rd.lit(`,"effects":[`) {
		if results, ok = rd.results(results); !ok {
			return false
		}
		r.cr.Effects = results
	} else {
		r.cr.Effects = results[:0] // kept for the next record; empty here
	}
	return rd.lit(`}`) && rd.i == len(rd.b)
}

// effects reads the effects record data and returns its results; they
// stay valid until the next call.
func (r *foldRecords) effects(data []byte) ([]effectResult, error) {
	rd := recordReader{b: data}
	if rd.lit(`{"results":`) {
		var results []effectResult
		ok := true
		switch {
		case rd.lit(`null`):
		case rd.lit(`[]`):
			results = []effectResult{} // empty, not null, as encoding/json reads it
		case rd.lit(`[`):
			results, ok = rd.results(r.results[:0])
			if ok {
				r.results = results
			}
		default:
			ok = false
		}
		if ok && rd.lit(`}`) && rd.i == len(rd.b) {
			return results, nil
		}
	}
	var er effectsRecord
	if err := json.Unmarshal(data, &er); err != nil {
		return nil, err
	}
	return er.Results, nil
}

// results reads effect results up to and with the "]" that ends their
// list (the "[" is read), appending them to out.
func (rd *recordReader) results(out []effectResult) ([]effectResult, bool) {
	for {
		var e effectResult
		if !rd.foldEffect(&e) {
			return out, false
		}
		out = append(out, e)
		if rd.lit(`]`) {
			return out, true
		}
		if !rd.lit(`,`) {
			return out, false
		}
	}
}

// foldEffect is effectResult without copying the kind and outcome the
// runtime writes (plainConstant).
func (rd *recordReader) foldEffect(e *effectResult) bool {
	var ok bool
	if !rd.lit(`{"version":`) {
		return false
	}
	if e.Version, ok = rd.uint(); !ok || !rd.lit(`,"index":`) {
		return false
	}
	if e.Index, ok = rd.int(); !ok || !rd.lit(`,"kind":`) {
		return false
	}
	kind, ok := rd.plain()
	if !ok || !rd.lit(`,"outcome":`) {
		return false
	}
	outcome, ok := rd.plain()
	if !ok {
		return false
	}
	e.Kind, e.Outcome = plainConstant(kind), plainConstant(outcome)
	if rd.lit(`,"error":`) {
		msg, ok := rd.plain()
		if !ok {
			return false
		}
		e.Error = string(msg)
	}
	return rd.lit(`}`)
}

// plain is str without the copy: the string's bytes, a view of rd.b.
func (rd *recordReader) plain() ([]byte, bool) {
	if !rd.lit(`"`) {
		return nil, false
	}
	start := rd.i
	i := bytes.IndexByte(rd.b[start:], '"')
	if i < 0 {
		return nil, false
	}
	s := rd.b[start : start+i]
	for _, c := range s {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, false // escapes and non-ASCII: encoding/json decides
		}
	}
	rd.i = start + i + 1
	return s, true
}

// plainConstant returns s as a string, the constant itself for the
// directive kinds and outcomes the runtime writes (no copy).
func plainConstant(s []byte) string {
	switch string(s) {
	case agents.KindEmit:
		return agents.KindEmit
	case agents.KindError:
		return agents.KindError
	case agents.KindSchedule:
		return agents.KindSchedule
	case agents.KindRunInstruction:
		return agents.KindRunInstruction
	case OutcomeOK:
		return OutcomeOK
	case OutcomeAsync:
		return OutcomeAsync
	case OutcomeFailed:
		return OutcomeFailed
	case OutcomeDropped:
		return OutcomeDropped
	case OutcomeStop:
		return OutcomeStop
	}
	return string(s)
}
