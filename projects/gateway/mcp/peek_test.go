package mcp

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestPeekMessageAgreesWithTheSDK: the stdio filter's cheap look at a
// line takes and refuses what the SDK's decoder does, and finds the same
// id; answerID finds the id of the answers the SDK writes.
func TestPeekMessageAgreesWithTheSDK(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":"s","error":{"code":-32602,"message":"no"}}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","result":{"id":9,"method":"x"},"id":3}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"id":1,"method":"ping"}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`not json`,
		`"2.0"`,
	} {
		msg, err := jsonrpc.DecodeMessage([]byte(line))
		p, perr := peekMessage([]byte(line))
		if (err == nil) != (perr == nil) {
			t.Errorf("%s: the SDK says %v, peekMessage %v", line, err, perr)
			continue
		}
		if err != nil {
			continue
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if !p.request || p.id != m.ID {
				t.Errorf("%s: peeked %+v, the SDK decoded a request with id %v", line, p, m.ID)
			}
		case *jsonrpc.Response:
			if p.request || p.id != m.ID {
				t.Errorf("%s: peeked %+v, the SDK decoded an answer to %v", line, p, m.ID)
			}
			if id, ok := answerID([]byte(line)); !ok || id != m.ID {
				t.Errorf("%s: answerID = %v, %v; want %v", line, id, ok, m.ID)
			}
		}
	}
}
