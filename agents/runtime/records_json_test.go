package runtime

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestCmdRecordEncoding: the hand-written cmd record is the record that
// record and encoding/json build, byte for byte, for any content.
func TestCmdRecordEncoding(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 4, 5, 6, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		cr := drawCmdRecord(t)
		id := "cmd:" + recordStrings.Draw(t, "id")
		want, err := record(TypeCmd, id, "", at, cr)
		if err != nil {
			t.Fatal(err)
		}
		got := cmdRecordSignal(id, at, &cr)
		if !bytes.Equal(got.Data(), want.Data()) {
			t.Fatalf("data\n got %s\nwant %s", got.Data(), want.Data())
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			t.Fatalf("event\n got %s\nwant %s", gj, wj)
		}
	})
}

// TestCmdRecordDecoding: decodeCmdRecord reads what encoding/json reads,
// for records appendCmdRecord wrote and for those bytes cut or changed.
func TestCmdRecordDecoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cr := drawCmdRecord(t)
		data := appendCmdRecord(nil, &cr)
		switch rapid.IntRange(0, 2).Draw(t, "mutation") {
		case 1:
			data = data[:rapid.IntRange(0, len(data)).Draw(t, "cut")]
		case 2:
			i := rapid.IntRange(0, len(data)-1).Draw(t, "at")
			data[i] = rapid.Byte().Draw(t, "byte")
		}
		var got, want cmdRecord
		gotErr := decodeCmdRecord(data, &got)
		wantErr := json.Unmarshal(data, &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%s: decode error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if wantErr == nil {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if !bytes.Equal(gj, wj) {
				t.Fatalf("%s:\n got %s\nwant %s", data, gj, wj)
			}
		}
	})
}

// recordStrings draws the strings of a record: mostly plain ids, sometimes
// anything (escapes, non-ASCII, invalid UTF-8).
var recordStrings = rapid.OneOf(rapid.StringMatching(`[A-Za-z0-9:#._-]{0,20}`), rapid.String())

// drawCmdRecord draws a cmd record with every optional member present or
// not.
func drawCmdRecord(t *rapid.T) cmdRecord {
	cr := cmdRecord{Signal: recordStrings.Draw(t, "signal"), Version: rapid.Uint64().Draw(t, "version")}
	if d := rapid.SampledFrom([]string{"", `[]`, `[{"kind":"emit","signal":{"data":{"count":1},"id":"a.0"}}]`}).Draw(t, "directives"); d != "" {
		cr.Directives = json.RawMessage(d)
	}
	if rapid.Bool().Draw(t, "has count") {
		n := rapid.IntRange(-1, 1000).Draw(t, "count")
		cr.Count = &n
	}
	for range rapid.IntRange(0, 3).Draw(t, "effects") {
		cr.Effects = append(cr.Effects, effectResult{
			Version: rapid.Uint64().Draw(t, "e.version"),
			Index:   rapid.IntRange(-1, 100).Draw(t, "e.index"),
			Kind:    recordStrings.Draw(t, "e.kind"),
			Outcome: recordStrings.Draw(t, "e.outcome"),
			Error:   recordStrings.Draw(t, "e.error"),
			gen:     rapid.Uint64().Draw(t, "e.gen"), // never written
		})
	}
	return cr
}
