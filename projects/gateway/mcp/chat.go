package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/gateway"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// The chat tool delegates a task to the project's assistant: the message
// goes into a conversation of the project (a new one, or the one the
// client names) as conversation.user.message, and the tool answers with
// the assistant's answer and the conversation's id. It is a conversation
// as `conv send` or an A2A task makes one, with the same owner rule as
// A2A's tasks: a conversation is continued only by the caller that
// started it, and by admins. The assistant's tool calls go through the
// project's policy as every conversation's do.
//
// The wait is bounded (wait_seconds): past it the answer is what is known
// and the conversation's id, and the conversation goes on. A client that
// goes away mid-answer leaves the conversation going on too: the turn is
// the log's, finished and recorded there whoever waits for it, and chat
// with the same conversation reads on from it.

// ChatTool is the name of the chat tool (P.chat on /mcp).
const ChatTool = "chat"

// DefaultChatWait and MaxChatWait bound how long chat waits for the
// assistant's answer.
const (
	DefaultChatWait = 120 * time.Second
	MaxChatWait     = 600 * time.Second
)

// Conversations is what a Host offers when it can drive the project's
// assistant; a Host without it (jido-bus mcp --nats-url) offers no chat
// tool. Errors a client should see are *bus.Error.
type Conversations interface {
	// StartConversation starts conversation conv of project with the
	// assistant's loop on, its conversation.started naming owner and
	// its permission mode (gateway.StartMode: "" is auto).
	StartConversation(ctx context.Context, project, conv, owner, mode string) error
	// SendMessage appends conversation.user.message with text to key
	// (<project>/<conversation>) and returns its id once committed.
	SendMessage(ctx context.Context, key, text string) (string, error)
	// ConversationEvents are key's logged events in order; none when it
	// never started.
	ConversationEvents(ctx context.Context, key string) ([]*views.Event, error)
	// FollowConversation yields key's logged events with Seq > after and
	// the deltas (Seq 0) published since the call, until ctx ends.
	FollowConversation(ctx context.Context, key string, after uint64) (iter.Seq2[*views.Event, error], error)
}

var chatInput = json.RawMessage(`{"type":"object","properties":{` +
	`"message":{"type":"string","description":"what to ask the project's assistant"},` +
	`"conversation":{"type":"string","description":"the id of a conversation this caller started with chat, to continue it; leave it out to start a new one"},` +
	`"mode":{"enum":["plan","ask","auto"],"description":"the permission mode of a conversation this call starts (not of one it continues): plan (read-only: no tool that writes files or runs programs), ask (each such call waits for a person, which stops the chat at awaiting_approval) or auto (the project's policy as it is); default, and at most, what the caller's token allows"},` +
	`"wait_seconds":{"type":"integer","minimum":1,"maximum":600,"description":"how long to wait for the answer (default 120); past it the answer is what is known so far, and chat with the conversation reads on"}` +
	`},"required":["message"],"additionalProperties":false}`)

var chatOutput = json.RawMessage(`{"type":"object","properties":{` +
	`"conversation":{"type":"string","description":"the conversation's id: pass it as conversation to continue"},` +
	`"state":{"type":"string","description":"answered, working (the wait ended first), awaiting_approval, failed or cancelled"},` +
	`"answer":{"type":"string","description":"the assistant's answer, or the text written so far"}` +
	`},"required":["conversation","state","answer"]}`)

// chatTool is the chat tool of project on s.
func (s *server) chatTool(project string) *sdk.Tool {
	open := true
	return &sdk.Tool{
		Name: s.qualify(project, ChatTool),
		Description: "Ask the assistant of project " + project + " to do a task: the message goes into a conversation of the project " +
			"(a new one, or the one named), the assistant works with the project's tools under its policy, and the answer comes back " +
			"with the conversation's id to continue. Progress is sent as notifications when the request carries a progress token.",
		InputSchema:  chatInput,
		OutputSchema: chatOutput,
		Annotations:  &sdk.ToolAnnotations{DestructiveHint: &open, OpenWorldHint: &open},
	}
}

type chatArgs struct {
	Message      string `json:"message"`
	Conversation string `json:"conversation"`
	Mode         string `json:"mode"`
	WaitSeconds  int    `json:"wait_seconds"`
}

type chatOut struct {
	Conversation string `json:"conversation"`
	State        string `json:"state"`
	Answer       string `json:"answer"`
}

// chat is the handler of project's chat tool over c. Every call is
// recorded in the project's stream, its target chat:<conversation>.
func (s *server) chat(project string, c Conversations) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		target := ChatTool
		var a chatArgs
		err := json.Unmarshal(req.Params.Arguments, &a)
		switch {
		case err != nil:
			err = bus.Errorf(bus.ReasonInvalidRequest, "chat's arguments: %v: give {\"message\": \"…\"}", err)
		case strings.TrimSpace(a.Message) == "":
			err = bus.Errorf(bus.ReasonInvalidRequest, "chat needs a message: give {\"message\": \"…\"}")
		case a.Mode != "" && a.Conversation != "":
			err = bus.Errorf(bus.ReasonInvalidRequest, "mode is chosen when chat starts a conversation, not when it continues one: leave mode out, or conversation out to start another")
		case a.WaitSeconds < 0 || time.Duration(a.WaitSeconds)*time.Second > MaxChatWait:
			err = bus.Errorf(bus.ReasonInvalidRequest, "wait_seconds %d: give 1 to %d (or leave it out: %d)", a.WaitSeconds, int(MaxChatWait/time.Second), int(DefaultChatWait/time.Second))
		}
		if err != nil {
			return errorResult(s.record(ctx, req, project, "tools/call", target, start, err)), nil
		}
		wait := DefaultChatWait
		if a.WaitSeconds > 0 {
			wait = time.Duration(a.WaitSeconds) * time.Second
		}
		conv := a.Conversation
		if conv == "" {
			conv = bus.NewID()
		}
		target = ChatTool + ":" + conv
		out, err := s.converse(ctx, req, project, c, conv, a.Conversation == "", a.Mode, a.Message, wait)
		if err := s.record(ctx, req, project, "tools/call", target, start, err); err != nil {
			return errorResult(err), nil
		}
		b, _ := json.Marshal(out)
		text := out.Answer
		if out.State != "answered" {
			text = fmt.Sprintf("%s\n\n[conversation %s is %s: call %s with {\"conversation\": %q} to continue]", out.Answer, conv, out.State, s.qualify(project, ChatTool), conv)
		}
		res := &sdk.CallToolResult{StructuredContent: json.RawMessage(b), Content: []sdk.Content{&sdk.TextContent{Text: strings.TrimSpace(text)}}}
		res.IsError = out.State == "failed"
		return res, nil
	}
}

// converse puts text into conversation conv of project (starting it when
// fresh) and follows it until the assistant answers, the turn stops (a
// failure, a cancel, an approval to wait for) or wait passes.
func (s *server) converse(ctx context.Context, req *sdk.CallToolRequest, project string, c Conversations, conv string, fresh bool, mode, text string, wait time.Duration) (chatOut, error) {
	out := chatOut{Conversation: conv, State: "working"}
	key := project + "/" + conv
	caller := s.callerOf(req)
	owner := s.ownerOf(req)
	events, err := c.ConversationEvents(ctx, key)
	if err != nil {
		return out, err
	}
	var head uint64
	switch {
	case fresh || len(events) == 0:
		if !fresh {
			return out, bus.Errorf(bus.ReasonNotFound, "project %s has no conversation %q this caller may continue: leave conversation out to start one", project, conv)
		}
		// The caller's token bounds the mode it may start in.
		m, err := gateway.StartMode(caller, mode)
		if err != nil {
			return out, err
		}
		if err := c.StartConversation(ctx, project, conv, owner, m); err != nil {
			return out, err
		}
	default:
		first := events[0]
		if first.Type != conversation.Started || !first.Data.Assistant || !caller.Admin && (first.Data.By == "" || first.Data.By != owner) {
			// Another's conversation is as one never started.
			return out, bus.Errorf(bus.ReasonNotFound, "project %s has no conversation %q this caller may continue (a conversation is continued by the caller that started it, and by admins): leave conversation out to start one", project, conv)
		}
		head = events[len(events)-1].Seq
	}
	// Followed before the message goes in, so that no delta of its answer
	// is published before we listen.
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	follow, err := c.FollowConversation(wctx, key, head)
	if err != nil {
		return out, err
	}
	id, err := c.SendMessage(ctx, key, text)
	if err != nil {
		return out, err
	}
	p := progress{ctx: ctx, req: req}
	var written strings.Builder // the text of the answer being written
	// in: our message is in the log; mine: the loop works on it — from
	// the first model call after it (a turn of its own, or the next step
	// of the turn it joined), so the end of a turn before it is not taken
	// for its answer.
	in, mine := false, false
	for ev, err := range follow {
		if err != nil {
			return out, err
		}
		if ev.Seq != 0 && ev.Seq <= head || ev.Invalid != "" {
			continue
		}
		d := &ev.Data
		switch ev.Type {
		case conversation.UserMessage:
			in = in || ev.ID == id
		case conversation.LLMRequested:
			mine = mine || in
		case conversation.AssistantDelta:
			// A delta is not logged and may come before the model call it
			// belongs to (llm.<our message>.…): its causation says.
			if mine || in && strings.HasPrefix(ev.CausationID, "llm."+id+".") {
				written.WriteString(d.Text)
				p.send(d.Text)
			}
		case conversation.ToolRequested:
			if mine {
				p.send(fmt.Sprintf("[calling %s]", d.Name))
			}
		case conversation.ToolApprovalRequested:
			if mine {
				out.State, out.Answer = "awaiting_approval", strings.TrimSpace(fmt.Sprintf("%s\n\nThe assistant waits for a person to approve tool call %s (%s): jido-bus conv approve %s %s", written.String(), d.CallID, d.Name, key, d.CallID))
				return out, nil
			}
		case conversation.AssistantMessage:
			if mine {
				written.Reset()
				if d.ToolCalls == 0 {
					out.State, out.Answer = "answered", d.Text
					return out, nil
				}
			}
		case conversation.LLMFailed:
			// A failure refused before the model call was logged (no
			// provider configured) ends the wait too.
			if in && !d.Retryable && (d.Error == nil || d.Error.Type != conversation.ReasonInterrupted || d.Attempt >= conversation.MaxAttempts) {
				out.State, out.Answer = "failed", "the assistant could not answer"
				if d.Error != nil {
					out.Answer = d.Error.Type + ": " + d.Error.Message
				}
				return out, nil
			}
		case conversation.Cancel, conversation.Stopped:
			if in {
				out.State, out.Answer = "cancelled", strings.TrimSpace(written.String()+"\n\nThe conversation was cancelled or stopped before it answered.")
				return out, nil
			}
		}
		if ev.Seq != 0 {
			head = ev.Seq
		}
	}
	if ctx.Err() != nil {
		// The client went away: the turn goes on in the log.
		return out, &tools.Error{Type: tools.ReasonCancelled, Message: fmt.Sprintf("the client went away; conversation %s goes on: continue it with chat {\"conversation\": %q}", key, conv)}
	}
	if wctx.Err() != nil {
		out.Answer = written.String()
		return out, nil
	}
	return out, bus.Errorf(bus.ReasonUnavailable, "following conversation %s ended before its answer: call chat with {\"conversation\": %q} to read on", key, conv)
}

// ownerOf is the owner recorded for a conversation req's caller starts:
// the A2A gateway's for an HTTP caller (its conversations are the same
// caller's A2A contexts), mcp:<name> for stdio.
func (s *server) ownerOf(req sdk.Request) string {
	c := s.callerOf(req)
	if ex := req.GetExtra(); ex != nil && ex.Header != nil && ex.Header.Get(callerHeader) != "" {
		return "http:" + c.Name
	}
	return "mcp:" + c.Name
}

// progress sends a request's progress notifications, when the client
// asked for them (a progress token); a client that stops reading them
// does not stop the answer.
type progress struct {
	ctx  context.Context
	req  *sdk.CallToolRequest
	n    float64
	gone bool // a notification failed: send no more
}

func (p *progress) send(msg string) {
	tok := p.req.Params.GetProgressToken()
	if tok == nil || p.req.Session == nil || p.gone {
		return
	}
	p.n++
	err := p.req.Session.NotifyProgress(p.ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: p.n, Message: msg})
	p.gone = err != nil
}
