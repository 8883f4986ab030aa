package bus

import (
	"encoding/json"
	"fmt"
)

// The control plane and calls answer with a JSON object whose "ok" member
// says whether the request succeeded:
//
//	{"ok":true, ...the result's members...}
//	{"ok":false,"error":{"type":"<reason>","message":"<for a person>"}}

// OKReply encodes result (a struct or map that encodes as a JSON object, or
// nil) with "ok":true added as its first member.
func OKReply(result any) ([]byte, error) {
	if result == nil {
		return []byte(`{"ok":true}`), nil
	}
	body, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode reply: %w", err)
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("encode reply: a result must encode as a JSON object, got %.20s", body)
	}
	if string(body) == "{}" {
		return []byte(`{"ok":true}`), nil
	}
	out := make([]byte, 0, len(body)+10)
	out = append(out, `{"ok":true,`...)
	return append(out, body[1:]...), nil
}

// ErrorReply encodes err as a failed reply; its type is the first *Error's
// in err's chain, or "internal".
func ErrorReply(err error) []byte {
	body, mErr := json.Marshal(struct {
		OK    bool   `json:"ok"`
		Error *Error `json:"error"`
	}{Error: AsError(err)})
	if mErr != nil { // an *Error is two strings; this cannot fail
		panic(mErr)
	}
	return body
}

// ReplyStatus is the common head of every reply, for clients decoding one.
type ReplyStatus struct {
	OK    bool   `json:"ok"`
	Error *Error `json:"error,omitempty"`
}

// Err returns the reply's error, or nil when it is ok.
func (r ReplyStatus) Err() error {
	if r.OK {
		return nil
	}
	if r.Error == nil {
		return Errorf(ReasonInternal, "reply has ok:false and no error")
	}
	return r.Error
}
