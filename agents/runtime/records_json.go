package runtime

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

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

// cmdRecordSignal builds the TypeCmd record of cr.
func cmdRecordSignal(id string, at time.Time, cr *cmdRecord) bus.Signal {
	data := appendCmdRecord(make([]byte, 0, 64+len(cr.Directives)+48*len(cr.Effects)), cr)
	ct := event.ApplicationJSON
	c := &event.EventContextV1{
		ID:              strings.TrimSpace(id), // as SetID would
		Source:          types.URIRef{URL: recordSourceURL},
		Type:            TypeCmd,
		Time:            &types.Timestamp{Time: at},
		DataContentType: &ct,
	}
	return bus.Signal{Context: c, DataEncoded: data}
}

func appendCmdRecord(b []byte, cr *cmdRecord) []byte {
	b = append(b, `{"signal":`...)
	b = appendJSONString(b, cr.Signal)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, cr.Version, 10)
	b = append(b, `,"directives":`...)
	if len(cr.Directives) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, cr.Directives...)
	}
	if cr.Count != nil {
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(*cr.Count), 10)
	}
	if len(cr.Effects) > 0 {
		b = append(b, `,"effects":[`...)
		for i := range cr.Effects {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendEffectResult(b, &cr.Effects[i])
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
