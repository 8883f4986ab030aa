package mcp

import (
	"bytes"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDecodeMessageAgreesWithTheSDK: the stdio connection's decoder takes
// and refuses what the SDK's does, into the same message, except that a
// line must hold one JSON value and nothing more.
func TestDecodeMessageAgreesWithTheSDK(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":"s","error":{"code":-32602,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":"s","error":{"code":-32602,"message":"no","data":{"why":1}}}`,
		`{"jsonrpc":"2.0","id":8,"result":null}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","result":{"id":9,"method":"x"},"id":3}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"id":1,"method":"ping"}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`not json`,
		`"2.0"`,
	} {
		want, err := jsonrpc.DecodeMessage([]byte(line))
		got, gerr := decodeMessage([]byte(line))
		if (err == nil) != (gerr == nil) {
			t.Errorf("%s: the SDK says %v, decodeMessage %v", line, err, gerr)
			continue
		}
		if err != nil {
			continue
		}
		switch w := want.(type) {
		case *jsonrpc.Request:
			g, ok := got.(*jsonrpc.Request)
			if !ok || g.ID != w.ID || g.Method != w.Method || !bytes.Equal(g.Params, w.Params) {
				t.Errorf("%s: decoded %#v, the SDK %#v", line, got, w)
			}
		case *jsonrpc.Response:
			g, ok := got.(*jsonrpc.Response)
			if !ok || g.ID != w.ID || !bytes.Equal(g.Result, w.Result) || (g.Error == nil) != (w.Error == nil) ||
				g.Error != nil && g.Error.Error() != w.Error.Error() {
				t.Errorf("%s: decoded %#v, the SDK %#v", line, got, w)
			}
		}
	}
	// The SDK takes the first value of these and its stream decoder then
	// ends the session on the rest; a line is one message here.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	} {
		if _, err := decodeMessage([]byte(line)); err == nil {
			t.Errorf("%s: decoded, want a parse error", line)
		}
	}
}
