package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The stdio filter looks at every line twice (lineFilter: is it JSON-RPC,
// is it a request; lockedWriter: which request does it answer), and the
// SDK decodes each line again. jsonrpc.DecodeMessage allocates a 32 KiB
// buffer per message however small (its decoder's), and decodes the
// whole result of an answer: for a 4 KiB read that was a tenth of the
// call's CPU. peekMessage takes only the envelope's members, with
// encoding/json, which skips the rest without keeping it.

// peeked is what the filter needs of a message: its id and whether it
// is a request (it has a method) or an answer.
type peeked struct {
	id      jsonrpc.ID
	request bool
}

// peekMessage checks line as jsonrpc.DecodeMessage does — the "jsonrpc"
// member is "2.0", the id is absent, null, a number or a string, a
// message without a method has an id — matching member names exactly, as
// the SDK's decoder does.
func peekMessage(line []byte) (peeked, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&m); err != nil {
		return peeked{}, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var version string
	if v, ok := m["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return peeked{}, fmt.Errorf("invalid message version tag %s; expected \"2.0\"", m["jsonrpc"])
	}
	var raw any
	if v, ok := m["id"]; ok {
		if err := json.Unmarshal(v, &raw); err != nil {
			return peeked{}, fmt.Errorf("unmarshaling jsonrpc message id: %w", err)
		}
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil {
		return peeked{}, err
	}
	if method, ok := m["method"]; ok {
		var s string
		if err := json.Unmarshal(method, &s); err != nil {
			return peeked{}, fmt.Errorf("unmarshaling jsonrpc message method: %w", err)
		}
		return peeked{id: id, request: true}, nil
	}
	if !id.IsValid() {
		return peeked{}, errors.New("JSON RPC invalid request: a message without a method needs an id")
	}
	return peeked{id: id}, nil
}

// answerID is the id of the answer the SDK wrote (p), or false for its
// requests and notifications to the client. The SDK writes the members
// by their exact names, so a struct finds them, and the result itself is
// skipped rather than decoded.
func answerID(p []byte) (jsonrpc.ID, bool) {
	var w struct {
		ID     any             `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(p, &w) != nil || w.Method != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(w.ID)
	return id, err == nil && id.IsValid()
}
