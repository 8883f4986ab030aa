package codec

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/jido-bus/jido-bus/bus"
)

func jsonValid(b []byte) bool { return json.Valid(b) }

// decodeStructured reads a structured-mode body. When sdk-go refuses it, the
// body is looked at again to say why: broken JSON, a missing or unsupported
// specversion, or "1.0.2", which is normalised to "1.0" and read again
// (sdk-go knows only "1.0" and "0.3").
func decodeStructured(body []byte) (bus.Signal, error) {
	var s event.Event
	err := s.UnmarshalJSON(body)
	if err == nil {
		return s, nil // sdk-go knows 1.0 and 0.3; bus.ValidateSignal refuses 0.3
	}
	if !json.Valid(body) {
		return bus.Signal{}, bus.Errorf(bus.ReasonMalformed, "structured body is not valid JSON")
	}
	sv, at, ok := findSpecVersion(body)
	switch {
	case !ok:
		return bus.Signal{}, bus.Errorf(bus.ReasonMissingAttribute, "specversion is missing; set it to %q", bus.SpecVersion)
	case sv == "1.0.2":
		fixed := make([]byte, 0, len(body))
		fixed = append(fixed, body[:at.start]...)
		fixed = append(fixed, `"1.0"`...)
		fixed = append(fixed, body[at.end:]...)
		if err = s.UnmarshalJSON(fixed); err == nil {
			return s, nil
		}
	case sv != bus.SpecVersion:
		return bus.Signal{}, bus.Errorf(bus.ReasonInvalidSpecVersion, "specversion %q is not supported; use %q", sv, bus.SpecVersion)
	}
	return bus.Signal{}, bus.Errorf(bus.ReasonMalformed, "structured event: %v", err)
}

type span struct{ start, end int }

// findSpecVersion returns the string value of the top-level "specversion"
// member of a valid JSON object, and where that value (with its quotes)
// stands in body. It walks the object's members with a json.Decoder, so a
// "specversion" nested inside data is not mistaken for it.
func findSpecVersion(body []byte) (string, span, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", span{}, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", span{}, false
		}
		if key != "specversion" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return "", span{}, false
			}
			continue
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return "", span{}, false
		}
		end := int(dec.InputOffset())
		v, err := strconv.Unquote(string(raw))
		if err != nil {
			return "", span{}, false
		}
		return v, span{start: end - len(raw), end: end}, true
	}
	return "", span{}, false
}
