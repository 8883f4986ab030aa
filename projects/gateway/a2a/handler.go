package a2agw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projections/conversation"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// Methods as recorded in project.gateway.request (the A2A 0.3 names,
// whatever version the client spoke).
const (
	MethodSend        = "message/send"
	MethodStream      = "message/stream"
	MethodGet         = "tasks/get"
	MethodCancel      = "tasks/cancel"
	MethodResubscribe = "tasks/resubscribe"
	MethodList        = "tasks/list"
)

// ResultDisconnected is the result recorded for a stream whose client went
// away before the turn ended (the turn goes on; resubscribe to follow it).
const ResultDisconnected = "disconnected"

// requestHandler is the gateway's a2asrv.RequestHandler: each method
// reads or appends to the conversation that is the task, through Host.
// The SDK's JSON-RPC bindings (1.0 and 0.3) call it.
type requestHandler struct {
	host Host
	log  *slog.Logger
}

var _ a2asrv.RequestHandler = (*requestHandler)(nil)

// record appends the request's project.gateway.request and returns the
// error the request is to be answered with: err, the request's own; or,
// when err is nil and the record could not be committed, that failure
// (unavailable): no client is told of a success the log does not show.
// A record that fails beside a failed request is logged.
func (h *requestHandler) record(ctx context.Context, method, target string, start time.Time, err error) error {
	r := gateway.Request{
		Gateway: "a2a", Method: method, Target: target, Caller: gateway.CallerOf(ctx),
		Result: "ok", DurationMS: float64(time.Since(start).Microseconds()) / 1000,
	}
	if err != nil {
		r.Result, r.Error = resultOf(err), bus.AsError(err).Message
	}
	rerr := h.host.RecordGatewayRequest(context.WithoutCancel(ctx), projectOf(ctx), r)
	switch {
	case rerr == nil:
		return err
	case err != nil:
		h.log.Error("a2a: request not recorded", "project", projectOf(ctx), "method", method, "err", rerr)
		return err
	}
	return fromHost(fmt.Errorf("%s was served, but its record in project %s's stream could not be committed: %w", strings.TrimSpace(method+" "+target), projectOf(ctx), rerr))
}

// errDisconnected marks a stream its client left.
var errDisconnected = errors.New("the client went away before the turn ended; the turn goes on (tasks/resubscribe follows it)")

// resultOf is the type word recorded for err.
func resultOf(err error) string {
	switch {
	case errors.Is(err, errDisconnected):
		return ResultDisconnected
	case errors.Is(err, a2a.ErrTaskNotFound):
		return bus.ReasonNotFound
	case errors.Is(err, a2a.ErrInvalidParams), errors.Is(err, a2a.ErrInvalidRequest):
		return bus.ReasonInvalidRequest
	case errors.Is(err, a2a.ErrTaskNotCancelable):
		return "not_cancelable"
	case errors.Is(err, a2a.ErrUnsupportedOperation), errors.Is(err, a2a.ErrPushNotificationNotSupported),
		errors.Is(err, a2a.ErrExtendedCardNotConfigured):
		return "unsupported"
	}
	if t := bus.ErrorType(err); t != "" {
		return t
	}
	return bus.ReasonInternal
}

// fromHost turns a Host error into the A2A error a client gets: its
// message kept, its kind mapped.
func fromHost(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if be := bus.AsError(err); be != nil {
		msg = be.Message
	}
	switch bus.ErrorType(err) {
	case bus.ReasonNotFound:
		return a2a.NewError(a2a.ErrTaskNotFound, msg)
	case bus.ReasonInvalidRequest, runtime.ReasonAlreadyExists, bus.ReasonTooLarge:
		return a2a.NewError(a2a.ErrInvalidParams, msg)
	}
	return a2a.NewError(a2a.ErrInternalError, msg)
}

// taskKey is the conversation key of task id in the request's project.
func taskKey(ctx context.Context, id string) (string, error) {
	key, err := conversation.Key(projectOf(ctx), id)
	if err != nil {
		return "", a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task id %q: a task is a conversation of the project, its id one segment of letters, digits, '_' and '-', starting with a letter or digit", id))
	}
	return key, nil
}

// load folds task id's conversation; a conversation never started, or
// one the caller may not see (owner.go), is task_not_found.
func (h *requestHandler) load(ctx context.Context, id string) (string, *turn, uint64, error) {
	key, err := taskKey(ctx, id)
	if err != nil {
		return "", nil, 0, err
	}
	events, err := h.host.ConversationEvents(ctx, key)
	if err != nil {
		return "", nil, 0, fromHost(err)
	}
	if err := visible(ctx, id, events); err != nil {
		return "", nil, 0, err
	}
	t := newTurn()
	var head uint64
	for _, ev := range events {
		t.fold(id, ev)
		head = max(head, ev.Seq)
	}
	return key, t, head, nil
}

// GetTask implements a2asrv.RequestHandler: the task from the log.
func (h *requestHandler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	markHandled(ctx)
	start, id := time.Now(), string(req.ID)
	_, t, _, err := h.load(ctx, id)
	if err := h.record(ctx, MethodGet, id, start, err); err != nil {
		return nil, err
	}
	return t.task(id, req.HistoryLength), nil
}

// CancelTask implements a2asrv.RequestHandler: conversation.cancel.
func (h *requestHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	markHandled(ctx)
	start, id := time.Now(), string(req.ID)
	task, err := h.cancel(ctx, id)
	if err := h.record(ctx, MethodCancel, id, start, err); err != nil {
		return nil, err
	}
	return task, nil
}

func (h *requestHandler) cancel(ctx context.Context, id string) (*a2a.Task, error) {
	key, t, _, err := h.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if s := t.state(); s.Terminal() {
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %s has ended (%s); send it a message to start another turn", id, s))
	}
	if err := h.host.CancelConversation(ctx, key, "cancelled by an A2A client"); err != nil {
		return nil, fromHost(err)
	}
	_, t, _, err = h.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return t.task(id, nil), nil
}

// sent is a user message appended to a task's conversation.
type sent struct {
	id, key string
	turn    *turn
	// head is the conversation's last seq before the message.
	head uint64
}

// send appends the request's message to its task's conversation,
// starting the conversation for a new task, owned by the caller. The task
// is the message's taskId, else its contextId, else a new id; a task the
// caller may not see is not continued (task_not_found).
func (h *requestHandler) send(ctx context.Context, req *a2a.SendMessageRequest) (sent, error) {
	m := req.Message
	if m == nil {
		return sent{}, a2a.NewError(a2a.ErrInvalidParams, "request has no message: send {\"message\":{\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"…\"}],\"messageId\":\"…\"}}")
	}
	var texts []string
	for _, p := range m.Parts {
		if p != nil && p.Text() != "" {
			texts = append(texts, p.Text())
		}
	}
	if len(texts) == 0 {
		return sent{}, a2a.NewError(a2a.ErrInvalidParams, "message has no text part: the assistant reads text; send {\"text\":\"…\"} in parts")
	}
	id := string(m.TaskID)
	switch {
	case id != "" && m.ContextID != "" && m.ContextID != id:
		return sent{}, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("taskId %q and contextId %q differ: here a task is its conversation and has the conversation's id as both; give one", id, m.ContextID))
	case id == "":
		id = m.ContextID
	}
	fresh := id == ""
	if fresh {
		id = bus.NewID()
	}
	key, err := taskKey(ctx, id)
	if err != nil {
		return sent{}, err
	}
	events, err := h.host.ConversationEvents(ctx, key)
	if err != nil {
		return sent{}, fromHost(err)
	}
	switch {
	case len(events) > 0:
		if err := visible(ctx, id, events); err != nil {
			return sent{}, err
		}
	case m.TaskID != "":
		return sent{}, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("project %s has no task %q: leave taskId out to start one", projectOf(ctx), id))
	default:
		if err := h.host.StartConversation(ctx, projectOf(ctx), id, OwnerOf(ctx)); err != nil {
			return sent{}, fromHost(err)
		}
	}
	s := sent{id: id, key: key, turn: newTurn()}
	for _, ev := range events {
		s.turn.fold(id, ev)
		s.head = max(s.head, ev.Seq)
	}
	if err := h.host.SendMessage(ctx, key, strings.Join(texts, "\n")); err != nil {
		return sent{}, fromHost(err)
	}
	return s, nil
}

// submitted is the task as it stands once the message is in: working on
// it, the message last in its history.
func (s sent) submitted(m *a2a.Message) *a2a.Task {
	task := s.turn.task(s.id, nil)
	task.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted}
	msg := *m
	msg.TaskID, msg.ContextID = a2a.TaskID(s.id), s.id
	task.History = append(task.History, &msg)
	return task
}

// follow folds the conversation's events after head into t and yields
// the stream's A2A events for them, until the turn of a user message at
// seq user or later has ended, ctx ends, or the log fails.
func (h *requestHandler) follow(ctx context.Context, id, key string, t *turn, head, user uint64, last a2a.TaskState, yield func(a2a.Event) bool) error {
	st := &streamer{taskID: id, last: last}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev, err := range h.host.FollowConversation(fctx, key, head) {
		if err != nil {
			return fromHost(err)
		}
		t.fold(id, ev)
		for _, out := range st.events(t, ev) {
			if !yield(out) {
				return errDisconnected
			}
		}
		if t.user >= user && ev.Seq != 0 && t.ended() {
			return nil
		}
	}
	if ctx.Err() != nil {
		return errDisconnected
	}
	return nil
}

// SendMessage implements a2asrv.RequestHandler: the message goes into the
// conversation and the answer is the task once the turn has ended (or at
// once, with returnImmediately).
func (h *requestHandler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	markHandled(ctx)
	start := time.Now()
	s, err := h.send(ctx, req)
	if err != nil {
		return nil, h.record(ctx, MethodSend, taskOf(req), start, err)
	}
	if req.Config != nil && req.Config.ReturnImmediately {
		if err := h.record(ctx, MethodSend, s.id, start, nil); err != nil {
			return nil, err
		}
		return s.submitted(req.Message), nil
	}
	err = h.follow(ctx, s.id, s.key, s.turn, s.head, s.head+1, a2a.TaskStateSubmitted, func(a2a.Event) bool { return true })
	if err := h.record(ctx, MethodSend, s.id, start, err); err != nil {
		if errors.Is(err, errDisconnected) {
			return nil, a2a.NewError(a2a.ErrInternalError, err.Error())
		}
		return nil, err
	}
	var hl *int
	if req.Config != nil {
		hl = req.Config.HistoryLength
	}
	return s.turn.task(s.id, hl), nil
}

func taskOf(req *a2a.SendMessageRequest) string {
	if req.Message == nil {
		return ""
	}
	if req.Message.TaskID != "" {
		return string(req.Message.TaskID)
	}
	return req.Message.ContextID
}

// SendStreamingMessage implements a2asrv.RequestHandler: the task first,
// then its status and artifact updates until the turn ends.
func (h *requestHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	markHandled(ctx)
	return func(yield func(a2a.Event, error) bool) {
		start := time.Now()
		s, err := h.send(ctx, req)
		if err != nil {
			yield(nil, h.record(ctx, MethodStream, taskOf(req), start, err))
			return
		}
		if !yield(s.submitted(req.Message), nil) {
			_ = h.record(ctx, MethodStream, s.id, start, errDisconnected)
			return
		}
		err = h.follow(ctx, s.id, s.key, s.turn, s.head, s.head+1, a2a.TaskStateSubmitted, func(e a2a.Event) bool { return yield(e, nil) })
		if err := h.record(ctx, MethodStream, s.id, start, err); err != nil && !errors.Is(err, errDisconnected) {
			yield(nil, err)
		}
	}
}

// SubscribeToTask implements a2asrv.RequestHandler: the task as it
// stands, then its updates until the turn ends. It reads the log, so it
// works for a task started before the node restarted. A task that has
// ended is unsupported_operation, as the protocol says; tasks/get reads it.
func (h *requestHandler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	markHandled(ctx)
	return func(yield func(a2a.Event, error) bool) {
		start, id := time.Now(), string(req.ID)
		key, t, head, err := h.load(ctx, id)
		if err == nil && t.state().Terminal() {
			err = a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s has ended (%s): tasks/get reads it; a message to it starts another turn", id, t.state()))
		}
		if err != nil {
			yield(nil, h.record(ctx, MethodResubscribe, id, start, err))
			return
		}
		task := t.task(id, nil)
		if !yield(task, nil) {
			_ = h.record(ctx, MethodResubscribe, id, start, errDisconnected)
			return
		}
		if t.ended() {
			if err := h.record(ctx, MethodResubscribe, id, start, nil); err != nil {
				yield(nil, err)
			}
			return
		}
		err = h.follow(ctx, id, key, t, head, t.user, task.Status.State, func(e a2a.Event) bool { return yield(e, nil) })
		if err := h.record(ctx, MethodResubscribe, id, start, err); err != nil && !errors.Is(err, errDisconnected) {
			yield(nil, err)
		}
	}
}

// ListTasks implements a2asrv.RequestHandler: not offered (jido-bus
// project conv ls lists a project's conversations).
func (h *requestHandler) ListTasks(ctx context.Context, _ *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	markHandled(ctx)
	err := a2a.NewError(a2a.ErrUnsupportedOperation, "tasks/list is not offered: a task is a conversation; jido-bus project conv ls lists them")
	return nil, h.record(ctx, MethodList, "", time.Now(), err)
}

var errNoPush = a2a.NewError(a2a.ErrPushNotificationNotSupported, "this agent sends no push notifications: follow a task with message/stream or tasks/resubscribe")

// unsupported records and returns err for a method the agent does not
// offer.
func (h *requestHandler) unsupported(ctx context.Context, method string, err error) error {
	markHandled(ctx)
	return h.record(ctx, method, "", time.Now(), err)
}

// GetTaskPushConfig implements a2asrv.RequestHandler: no push.
func (h *requestHandler) GetTaskPushConfig(ctx context.Context, _ *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, h.unsupported(ctx, "tasks/pushNotificationConfig/get", errNoPush)
}

// ListTaskPushConfigs implements a2asrv.RequestHandler: no push.
func (h *requestHandler) ListTaskPushConfigs(ctx context.Context, _ *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, h.unsupported(ctx, "tasks/pushNotificationConfig/list", errNoPush)
}

// CreateTaskPushConfig implements a2asrv.RequestHandler: no push.
func (h *requestHandler) CreateTaskPushConfig(ctx context.Context, _ *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, h.unsupported(ctx, "tasks/pushNotificationConfig/set", errNoPush)
}

// DeleteTaskPushConfig implements a2asrv.RequestHandler: no push.
func (h *requestHandler) DeleteTaskPushConfig(ctx context.Context, _ *a2a.DeleteTaskPushConfigRequest) error {
	return h.unsupported(ctx, "tasks/pushNotificationConfig/delete", errNoPush)
}

// GetExtendedAgentCard implements a2asrv.RequestHandler: the public card
// is the only one.
func (h *requestHandler) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, h.unsupported(ctx, "agent/getAuthenticatedExtendedCard", a2a.NewError(a2a.ErrExtendedCardNotConfigured, "this agent has only its public card: GET .well-known/agent-card.json"))
}

// refused records a request the SDK's binding answered with a JSON-RPC
// error before any method ran.
func (h *requestHandler) refused(ctx context.Context, method string, body []byte, start time.Time) {
	var err error
	switch {
	case !json.Valid(body):
		err = bus.Errorf(bus.ReasonMalformed, "the body is not JSON: the A2A endpoint takes JSON-RPC 2.0 requests")
	case method == "":
		err = bus.Errorf(bus.ReasonInvalidRequest, "not a JSON-RPC 2.0 request (no method)")
	default:
		err = bus.Errorf(bus.ReasonInvalidRequest, "JSON-RPC request refused: method %q is unknown, or the request is not JSON-RPC 2.0", method)
	}
	_ = h.record(ctx, method, "", start, err)
}
