package runtime

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/jido-bus/jido-bus/agents"
)

// TestFoldRecordDecoding: the fold's readers read what decodeCmdRecord
// and encoding/json read — the records the runtime writes, and those
// bytes cut or changed — and a record read leaves nothing behind in the
// next one read into the same memory, or into a reader released and
// taken again.
func TestFoldRecordDecoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := pooledFoldRecords()
		defer func() { r.release() }()
		for range rapid.IntRange(1, 4).Draw(t, "records") {
			if rapid.Bool().Draw(t, "release") {
				r.release()
				r = pooledFoldRecords()
			}
			cr := drawCmdRecord(t)
			for i := range cr.Effects { // mostly what the runtime writes
				cr.Effects[i].Kind = recordWords.Draw(t, "kind")
				cr.Effects[i].Outcome = recordWords.Draw(t, "outcome")
			}
			data := mutate(t, appendCmdRecord(nil, &cr))
			id := rapid.SampledFrom([]string{"", cr.Signal, "other"}).Draw(t, "id")
			var want cmdRecord
			wantErr := decodeCmdRecord(data, &want)
			got, gotErr := r.cmd(data, id)
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("%s: fold's error %v, decodeCmdRecord's %v", data, gotErr, wantErr)
			}
			if wantErr == nil {
				if gj, wj := marshal(t, got), marshal(t, want); !bytes.Equal(gj, wj) {
					t.Fatalf("%s:\n got %s\nwant %s", data, gj, wj)
				}
			}

			er := effectsRecord{Results: cr.Effects}
			if rapid.Bool().Draw(t, "empty, not null") && er.Results == nil {
				er.Results = []effectResult{}
			}
			rec, err := record(TypeEffects, "effects", "", at0, er)
			if err != nil {
				t.Fatal(err)
			}
			data = mutate(t, bytes.Clone(rec.Data()))
			var wantEr effectsRecord
			wantErr = json.Unmarshal(data, &wantEr)
			results, gotErr := r.effects(data)
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("%s: fold's error %v, encoding/json's %v", data, gotErr, wantErr)
			}
			if wantErr == nil {
				if gj, wj := marshal(t, effectsRecord{Results: results}), marshal(t, wantEr); !bytes.Equal(gj, wj) {
					t.Fatalf("%s:\n got %s\nwant %s", data, gj, wj)
				}
			}
		}
	})
}

// TestFoldRecordsShareTheSignal: a cmd record that names the signal the
// fold expects holds that signal's id, not a copy; the directives are a
// view of the record that an append cannot write through.
func TestFoldRecordsShareTheSignal(t *testing.T) {
	count := 1
	data := appendCmdRecord(nil, &cmdRecord{Signal: "s-1", Version: 7, Directives: json.RawMessage(`[{"kind":"stop"}]`), Count: &count})
	var r foldRecords
	id := string([]byte("s-1"))
	cr, err := r.cmd(data, id)
	if err != nil {
		t.Fatal(err)
	}
	if cr.Signal != id || unsafe.StringData(cr.Signal) != unsafe.StringData(id) {
		t.Fatalf("signal %q is a copy of %q", cr.Signal, id)
	}
	if cap(cr.Directives) != len(cr.Directives) || &cr.Directives[0] != &data[bytes.Index(data, []byte(`[{"kind"`))] {
		t.Fatalf("directives %s are not a capped view of the record", cr.Directives)
	}
	if cr.Version != 7 || cr.Count == nil || *cr.Count != 1 {
		t.Fatalf("record %+v", cr)
	}
}

// recordWords draws the kinds and outcomes the runtime writes, or any
// string.
var recordWords = rapid.OneOf(rapid.SampledFrom([]string{
	agents.KindEmit, agents.KindError, agents.KindSchedule, agents.KindRunInstruction, agents.KindStop, "custom",
	OutcomeOK, OutcomeAsync, OutcomeFailed, OutcomeDropped, OutcomeStop, OutcomeUnknown,
}), recordStrings)

var at0 = time.Date(2026, 11, 28, 1, 2, 3, 4, time.UTC)

func marshal(t *rapid.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate returns data, or it cut short, or with one byte changed.
func mutate(t *rapid.T, data []byte) []byte {
	switch rapid.IntRange(0, 2).Draw(t, "mutation") {
	case 1:
		return data[:rapid.IntRange(0, len(data)).Draw(t, "cut")]
	case 2:
		i := rapid.IntRange(0, len(data)-1).Draw(t, "at")
		data[i] = rapid.Byte().Draw(t, "byte")
	}
	return data
}
