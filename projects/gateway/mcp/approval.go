package mcp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/projects/tools"
)

// approvalKey names the one input request of an elicited approval.
const approvalKey = "approve"

// approvalTTL bounds how long a question may wait for its answer.
const approvalTTL = 10 * time.Minute

// approve decides a call of a tool the policy marks ask. A first call
// from a client that can elicit gets the question (question != nil: an
// input-required result, the SDK asks older clients itself and calls
// again); the call that carries the answer is approved when the person
// accepted with approve: true, refused (denied) otherwise. A client that
// cannot elicit gets approved false, and the runner refuses the call
// (approval_required). The state between the two rounds is signed, so an
// answer is only taken for the call it was asked about.
func (s *server) approve(req *sdk.CallToolRequest, project, name, reason string, args []byte) (approved bool, question *sdk.CallToolResult, err error) {
	if ans, ok := req.Params.InputResponses[approvalKey]; ok {
		if !s.g.validState(req.Params.RequestState, project, name, args) {
			return false, nil, tools.Errorf(tools.ReasonDenied, "%s: the approval sent does not answer this call (or is older than %s): call the tool again and answer the question it asks", name, approvalTTL)
		}
		er, ok := ans.(*sdk.ElicitResult)
		if ok && er.Action == "accept" && er.Content["approve"] == true {
			return true, nil, nil
		}
		return false, nil, tools.Errorf(tools.ReasonDenied, "%s: the person asked through the MCP client did not approve the call", name)
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		return false, nil, nil
	}
	q := &sdk.ElicitParams{
		Mode:    "form",
		Message: fmt.Sprintf("Project %s: %s. Run %s with %s?", project, reason, name, preview(args)),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Run " + name, "description": "true runs the call; anything else refuses it"},
			},
			"required": []string{"approve"},
		},
	}
	return false, &sdk.CallToolResult{
		InputRequests: sdk.InputRequestMap{approvalKey: q},
		RequestState:  s.g.state(time.Now(), project, name, args),
	}, nil
}

// noElicitation is the refusal of an ask tool for a client that cannot
// ask a person.
func noElicitation(name, reason string) string {
	return fmt.Sprintf("%s: %s, and this MCP client cannot ask one (it declares no elicitation capability): use a client that supports elicitation, approve it in a conversation (jido-bus conv), or allow the tool in .jido/policy.yaml", name, reason)
}

func preview(args []byte) string {
	s := string(args)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// state is the signed request state of a question asked at t.
func (g *Gateway) state(t time.Time, project, name string, args []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return ts + "." + g.mac(ts, project, name, args)
}

func (g *Gateway) validState(st, project, name string, args []byte) bool {
	ts, sig, ok := strings.Cut(st, ".")
	if !ok {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)) > approvalTTL {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(g.mac(ts, project, name, args)))
}

func (g *Gateway) mac(ts, project, name string, args []byte) string {
	m := hmac.New(sha256.New, g.key)
	for _, part := range [][]byte{[]byte(ts), []byte(project), []byte(name), args} {
		m.Write([]byte(strconv.Itoa(len(part)) + ":"))
		m.Write(part)
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
