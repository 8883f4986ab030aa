package agents

import (
	"encoding/json"
	"fmt"
	"math"
)

// State is an agent's state: a JSON object held as encoding/json decodes
// one — map[string]any with nil, bool, float64, string, []any and
// map[string]any values. Holding it in that model is what makes replay
// exact: the state an agent has in memory equals, value for value, the
// state read back from its JSON in the log, so an action sees the same
// numbers either way.
//
// A State handed to an action is shared with earlier versions of the agent
// and must not be modified; actions describe changes as state operations
// (see StateOp) or return a new State, and Cmd applies them copy-on-write.
type State map[string]any

// Get returns the value at path (a sequence of object member names).
func (s State) Get(path ...string) (any, bool) {
	var cur any = map[string]any(s)
	for _, key := range path {
		m, ok := asObject(cur)
		if !ok {
			return nil, false
		}
		if cur, ok = m[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Number returns the number at key, or 0 when it is absent or not a number.
func (s State) Number(key string) float64 {
	f, _ := s[key].(float64)
	return f
}

// String returns the string at key, or "" when it is absent or not a string.
func (s State) String(key string) string {
	str, _ := s[key].(string)
	return str
}

// Object returns the object at key, or nil when it is absent or not an
// object. The result is shared with s: read it, do not modify it.
func (s State) Object(key string) State {
	m, _ := asObject(s[key])
	return m
}

// List returns the array at key, or nil when it is absent or not an array.
// The result is shared with s: read it, do not modify it.
func (s State) List(key string) []any {
	l, _ := s[key].([]any)
	return l
}

// Decode converts v (a State, or any value of one) into T through JSON, for
// actions that prefer typed state: Decode[CounterState](env.State).
func Decode[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}

// EncodeState returns the JSON of s as the log stores it. Object members
// are sorted by name, so equal states encode to equal bytes.
func EncodeState(s State) ([]byte, error) {
	if s == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]any(s))
}

// DecodeState parses a state written by EncodeState.
func DecodeState(data []byte) (State, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode state: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("decode state: want a JSON object, got null")
	}
	return State(m), nil
}

func asObject(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case State:
		return m, true
	}
	return nil, false
}

// normalize converts a Go value into the JSON model State holds (see
// State), copying maps and slices so state never aliases a value an action
// still holds. Common types are converted directly; anything else goes
// through encoding/json, which is slower but gives exactly what the log
// would.
func normalize(v any) (any, error) {
	// Values already in the model are returned as the interface they came
	// in, not re-boxed, which would allocate.
	switch x := v.(type) {
	case nil, bool, string:
		return v, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v cannot be stored: JSON has no NaN or infinity", x)
		}
		return v, nil
	case float32:
		return normalize(float64(x))
	case int:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint16:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		return f, nil
	case map[string]any:
		return normalizeObject(x)
	case State:
		return normalizeObject(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = n
		}
		return out, nil
	case json.RawMessage:
		var out any
		if err := json.Unmarshal(x, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func normalizeObject(m map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, e := range m {
		n, err := normalize(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = n
	}
	return out, nil
}

// cloneJSON deep-copies a value of the JSON model, for handing state or
// config to a caller who may modify it.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneJSON(e)
		}
		return out
	case State:
		return State(cloneJSON(map[string]any(x)).(map[string]any))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSON(e)
		}
		return out
	}
	return v
}
