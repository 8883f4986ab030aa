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
// by their exact names, jsonrpc and id first, then method, result or
// error: the members are read one token at a time, and the look ends at
// the first of result or error, without scanning the result itself (a
// 4 KiB read's answer is twice that).
func answerID(p []byte) (jsonrpc.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	var raw any
	hasID := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		switch key {
		case "method":
			return jsonrpc.ID{}, false
		case "id":
			if dec.Decode(&raw) != nil {
				return jsonrpc.ID{}, false
			}
			hasID = true
			continue
		case "result", "error":
			if hasID {
				id, err := jsonrpc.MakeID(raw)
				return id, err == nil && id.IsValid()
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return jsonrpc.ID{}, false
		}
	}
	id, err := jsonrpc.MakeID(raw)
	return id, hasID && err == nil && id.IsValid()
}
