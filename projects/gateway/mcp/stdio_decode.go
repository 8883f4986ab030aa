package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeMessage decodes one line as jsonrpc.DecodeMessage does — the
// "jsonrpc" member is "2.0", the id is absent, null, a number or a
// string, a message with a method is a request, one without needs an id
// — matching member names exactly, as the SDK's decoder does. Unlike it,
// the line must be one JSON value and nothing else (the SDK takes the
// first value and leaves the rest to end the session), and it decodes
// with encoding/json into the members it keeps, without the SDK
// decoder's 32 KiB buffer per message.
func decodeMessage(line []byte) (jsonrpc.Message, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var version string
	if v, ok := m["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %s; expected \"2.0\"", m["jsonrpc"])
	}
	var raw any
	if v, ok := m["id"]; ok {
		if err := json.Unmarshal(v, &raw); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message id: %w", err)
		}
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil {
		return nil, err
	}
	if method, ok := m["method"]; ok {
		var s string
		if err := json.Unmarshal(method, &s); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message method: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: s, Params: m["params"]}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("JSON RPC invalid request: a message without a method needs an id")
	}
	resp := &jsonrpc.Response{ID: id, Result: m["result"]}
	if e := nonNull(m["error"]); e != nil {
		var we jsonrpc.Error
		if err := json.Unmarshal(e, &we); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message error: %w", err)
		}
		resp.Error = &we
	}
	return resp, nil
}

// nonNull is raw, or nil for a JSON null: an error member that is null
// is no error, as the SDK's *WireError member decodes it.
func nonNull(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}
