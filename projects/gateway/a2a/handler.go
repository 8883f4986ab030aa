package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
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
	// card is the extended card of the request's project.
	card func(context.Context) (*sdk.AgentCard, error)
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
var errDisconnected = errors.New("the client went away before the task ended; the task goes on, and resubscribing to it follows it")

// resultOf is the type word recorded for err.
func resultOf(err error) string {
	switch {
	case errors.Is(err, errDisconnected):
		return ResultDisconnected
	case errors.Is(err, sdk.ErrTaskNotFound):
		return bus.ReasonNotFound
	case errors.Is(err, sdk.ErrInvalidParams), errors.Is(err, sdk.ErrInvalidRequest):
		return bus.ReasonInvalidRequest
	case errors.Is(err, sdk.ErrTaskNotCancelable):
		return "not_cancelable"
	case errors.Is(err, sdk.ErrUnsupportedOperation), errors.Is(err, sdk.ErrPushNotificationNotSupported),
		errors.Is(err, sdk.ErrExtendedCardNotConfigured):
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
		return sdk.NewError(sdk.ErrTaskNotFound, msg)
	case bus.ReasonInvalidRequest, runtime.ReasonAlreadyExists, bus.ReasonTooLarge:
		return sdk.NewError(sdk.ErrInvalidParams, msg)
	}
	return sdk.NewError(sdk.ErrInternalError, msg)
}

// taskKey is the conversation key of context conv in the request's
// project.
func taskKey(ctx context.Context, conv string) (string, error) {
	key, err := conversation.Key(projectOf(ctx), conv)
	if err != nil {
		return "", sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("context %q: a context is a conversation of the project, its id one segment of letters, digits, '_' and '-', starting with a letter or digit; its first task has the same id, its n-th <context>:<n>", conv))
	}
	return key, nil
}

// load folds the context of task id; a task never started, or one the
// caller may not see (owner.go), is task_not_found.
func (h *requestHandler) load(ctx context.Context, id string) (string, *contextFold, *task, error) {
	conv, _, ok := parseTaskID(id)
	if !ok {
		return "", nil, nil, sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("task id %q: a task id is its context's id (the first task) or <context>:<n> (the n-th, from 2)", id))
	}
	key, err := taskKey(ctx, conv)
	if err != nil {
		return "", nil, nil, err
	}
	events, err := h.host.ConversationEvents(ctx, key)
	if err != nil {
		return "", nil, nil, fromHost(err)
	}
	if err := visible(ctx, id, events); err != nil {
		return "", nil, nil, err
	}
	f := newContextFold(conv)
	for _, ev := range events {
		f.fold(ev)
	}
	t := f.find(id)
	if t == nil {
		return "", nil, nil, notFound(ctx, id)
	}
	return key, f, t, nil
}

// GetTask implements a2asrv.RequestHandler: the task from the log.
func (h *requestHandler) GetTask(ctx context.Context, req *sdk.GetTaskRequest) (*sdk.Task, error) {
	markHandled(ctx)
	start, id := time.Now(), string(req.ID)
	_, f, t, err := h.load(ctx, id)
	if err := h.record(ctx, MethodGet, id, start, err); err != nil {
		return nil, err
	}
	return f.task(t, req.HistoryLength), nil
}

// CancelTask implements a2asrv.RequestHandler: conversation.cancel.
func (h *requestHandler) CancelTask(ctx context.Context, req *sdk.CancelTaskRequest) (*sdk.Task, error) {
	markHandled(ctx)
	start, id := time.Now(), string(req.ID)
	task, err := h.cancel(ctx, id)
	if err := h.record(ctx, MethodCancel, id, start, err); err != nil {
		return nil, err
	}
	return task, nil
}

func (h *requestHandler) cancel(ctx context.Context, id string) (*sdk.Task, error) {
	key, f, t, err := h.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if s := f.state(t); s.Terminal() {
		return nil, sdk.NewError(sdk.ErrTaskNotCancelable, fmt.Sprintf("task %s has ended (%s): a message in its context (contextId %s, no taskId) starts a new task", id, stateName(ctx, s), f.conv))
	}
	if err := h.host.CancelConversation(ctx, key, "cancelled by an A2A client"); err != nil {
		return nil, fromHost(err)
	}
	_, f, t, err = h.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return f.task(t, nil), nil
}

// sent is a user message appended to its context's conversation.
type sent struct {
	key string
	// fold is the context folded up to at least the message; task holds
	// the message, which fresh says began it.
	fold  *contextFold
	task  *task
	fresh bool
	// id is the message's event id.
	id string
	// events are the conversation's events and deltas from before the
	// message on, until stop is called.
	events iter.Seq2[*views.Event, error]
	stop   context.CancelFunc
}

// send appends the request's message to its context's conversation,
// starting the conversation (owned by the caller) for a new context. A
// message with a taskId continues that task, which must wait for input
// (input-required); one with only a contextId starts the context's next
// task, once its latest has ended; one with neither starts a context. A
// context or task the caller may not see is task_not_found. On success
// the caller must call the result's stop.
func (h *requestHandler) send(ctx context.Context, req *sdk.SendMessageRequest) (sent, error) {
	m := req.Message
	if m == nil {
		return sent{}, sdk.NewError(sdk.ErrInvalidParams, "request has no message: send "+textMessage(ctx))
	}
	var texts []string
	for _, p := range m.Parts {
		if p != nil && p.Text() != "" {
			texts = append(texts, p.Text())
		}
	}
	if len(texts) == 0 {
		return sent{}, sdk.NewError(sdk.ErrInvalidParams, "message has no text part: the assistant reads text; send "+textPart(ctx)+" in parts")
	}
	taskID, conv := string(m.TaskID), m.ContextID
	if taskID != "" {
		c, _, ok := parseTaskID(taskID)
		switch {
		case !ok:
			return sent{}, sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("taskId %q: a task id is its context's id (the first task) or <context>:<n> (the n-th, from 2)", taskID))
		case conv != "" && conv != c:
			return sent{}, sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("taskId %q is a task of context %q, not of contextId %q: give one of them", taskID, c, conv))
		}
		conv = c
	}
	if conv == "" {
		conv = bus.NewID()
	}
	key, err := taskKey(ctx, conv)
	if err != nil {
		return sent{}, err
	}
	events, err := h.host.ConversationEvents(ctx, key)
	if err != nil {
		return sent{}, fromHost(err)
	}
	f := newContextFold(conv)
	switch {
	case len(events) > 0:
		if err := visible(ctx, conv, events); err != nil {
			return sent{}, err
		}
		for _, ev := range events {
			f.fold(ev)
		}
		if err := joinable(ctx, f, taskID); err != nil {
			return sent{}, err
		}
	case taskID != "":
		return sent{}, sdk.NewError(sdk.ErrTaskNotFound, fmt.Sprintf("project %s has no task %q: leave taskId out to start one", projectOf(ctx), taskID))
	default:
		mode, err := startMode(ctx, m.Metadata)
		if err != nil {
			return sent{}, err
		}
		if err := h.host.StartConversation(ctx, projectOf(ctx), conv, OwnerOf(ctx), mode); err != nil {
			return sent{}, fromHost(err)
		}
	}
	// Followed before the message goes in, so that no delta of its
	// answer is published before the stream listens.
	fctx, stop := context.WithCancel(ctx)
	follow, err := h.host.FollowConversation(fctx, key, f.head)
	if err != nil {
		stop()
		return sent{}, fromHost(err)
	}
	id, err := h.host.SendMessage(ctx, key, strings.Join(texts, "\n"))
	if err != nil {
		stop()
		return sent{}, fromHost(err)
	}
	// The task the message went to is the one the log says: another
	// message (conv send, another stream) may have come first.
	if events, err = h.host.ConversationEvents(ctx, key); err != nil {
		stop()
		return sent{}, fromHost(err)
	}
	// Folded up to the message, no further: what came after it (the
	// model's request, its tool calls, perhaps the whole answer of a fast
	// model) is the stream's to send, and follow skips what f holds.
	f = newContextFold(conv)
	for _, ev := range events {
		f.fold(ev)
		if ev.ID == id {
			break
		}
	}
	t := f.taskOfMessage(id)
	if t == nil {
		stop()
		return sent{}, sdk.NewError(sdk.ErrInternalError, fmt.Sprintf("the message %s was sent to conversation %s but is not in its log; tasks/get %s tells where the context stands", id, key, conv))
	}
	return sent{key: key, fold: f, task: t, fresh: t.history[0].ID == id, id: id, events: follow, stop: stop}, nil
}

// joinable says why a message may not go to context f (with taskID, to
// that task): a task that ended takes no more messages, and one that
// works takes none until it waits for input or ends.
func joinable(ctx context.Context, f *contextFold, taskID string) error {
	latest := f.latest()
	if taskID == "" {
		if latest == nil || latest.end != nil {
			return nil // the context's next task
		}
		s := f.state(latest)
		if s == sdk.TaskStateInputRequired {
			return sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("context %s has task %s waiting for input (%s): send with taskId %s to add to it, or cancel it (%s); a message with only the contextId starts a new task once it has ended", f.conv, latest.id, stateName(ctx, s), latest.id, name(ctx, MethodCancel)))
		}
		return sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("context %s has task %s still %s: follow it (%s) or cancel it (%s); a message with only the contextId starts a new task once it has ended", f.conv, latest.id, stateName(ctx, s), name(ctx, MethodResubscribe), name(ctx, MethodCancel)))
	}
	t := f.find(taskID)
	if t == nil {
		return notFound(ctx, taskID)
	}
	switch s := f.state(t); {
	case s.Terminal():
		return sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("task %s has ended (%s) and takes no more messages: send with contextId %s and no taskId to start a new task in its context", taskID, stateName(ctx, s), f.conv))
	case s != sdk.TaskStateInputRequired:
		return sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("task %s is %s: a message joins a task only while it waits for input (%s); follow it (%s) or cancel it (%s)", taskID, stateName(ctx, s), stateName(ctx, sdk.TaskStateInputRequired), name(ctx, MethodResubscribe), name(ctx, MethodCancel)))
	}
	return nil
}

// snapshot is the message's task as it stands, the message as the client
// sent it in its history; a task the message began and that has not
// moved on is submitted.
func (s sent) snapshot(m *sdk.Message, historyLength *int) *sdk.Task {
	task := s.fold.task(s.task, historyLength)
	history := make([]*sdk.Message, len(task.History))
	for i, h := range task.History {
		history[i] = h
		if h.ID == s.id {
			msg := *m
			msg.TaskID, msg.ContextID = task.ID, task.ContextID
			history[i] = &msg
		}
	}
	task.History = history
	if s.fresh && task.Status.State == sdk.TaskStateWorking {
		task.Status = sdk.TaskStatus{State: sdk.TaskStateSubmitted, Timestamp: task.Status.Timestamp}
	}
	return task
}

// follow folds the events of task t after what f holds and yields the
// stream's A2A events for them, until the task ends or waits for input,
// ctx ends, or the log fails. shown is the state the client was last
// told.
func (h *requestHandler) follow(ctx context.Context, f *contextFold, t *task, events iter.Seq2[*views.Event, error], shown sdk.TaskState, yield func(sdk.Event) bool) error {
	st := newStreamer(t, f.conv, shown)
	if f.ended(t) {
		if s := f.state(t); s != shown {
			if !yield(sdk.NewStatusUpdateEvent(st.info(), s, f.statusMessage(t))) {
				return errDisconnected
			}
		}
		return nil
	}
	for ev, err := range events {
		if err != nil {
			return fromHost(err)
		}
		if ev.Seq != 0 && ev.Seq <= f.head {
			continue // folded before the stream began
		}
		f.fold(ev)
		for _, out := range st.events(f, t, ev) {
			if !yield(out) {
				return errDisconnected
			}
		}
		if ev.Seq != 0 && f.ended(t) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return errDisconnected
	}
	return nil
}

// SendMessage implements a2asrv.RequestHandler: the message goes into the
// conversation and the answer is the task once it has ended or waits for
// input (or at once, with returnImmediately).
func (h *requestHandler) SendMessage(ctx context.Context, req *sdk.SendMessageRequest) (sdk.SendMessageResult, error) {
	markHandled(ctx)
	start := time.Now()
	s, err := h.send(ctx, req)
	if err != nil {
		return nil, h.record(ctx, MethodSend, taskOf(req), start, err)
	}
	defer s.stop()
	var hl *int
	if req.Config != nil {
		hl = req.Config.HistoryLength
	}
	if req.Config != nil && req.Config.ReturnImmediately {
		if err := h.record(ctx, MethodSend, s.task.id, start, nil); err != nil {
			return nil, err
		}
		return s.snapshot(req.Message, hl), nil
	}
	err = h.follow(ctx, s.fold, s.task, s.events, s.fold.state(s.task), func(sdk.Event) bool { return true })
	if err := h.record(ctx, MethodSend, s.task.id, start, err); err != nil {
		if errors.Is(err, errDisconnected) {
			return nil, sdk.NewError(sdk.ErrInternalError, err.Error())
		}
		return nil, err
	}
	return s.fold.task(s.task, hl), nil
}

func taskOf(req *sdk.SendMessageRequest) string {
	if req.Message == nil {
		return ""
	}
	if req.Message.TaskID != "" {
		return string(req.Message.TaskID)
	}
	return req.Message.ContextID
}

// SendStreamingMessage implements a2asrv.RequestHandler: the task first,
// then its status and artifact updates until it ends or waits for input.
func (h *requestHandler) SendStreamingMessage(ctx context.Context, req *sdk.SendMessageRequest) iter.Seq2[sdk.Event, error] {
	markHandled(ctx)
	return func(yield func(sdk.Event, error) bool) {
		start := time.Now()
		s, err := h.send(ctx, req)
		if err != nil {
			yield(nil, h.record(ctx, MethodStream, taskOf(req), start, err))
			return
		}
		defer s.stop()
		first := s.snapshot(req.Message, nil)
		if !yield(first, nil) {
			_ = h.record(ctx, MethodStream, s.task.id, start, errDisconnected)
			return
		}
		err = h.follow(ctx, s.fold, s.task, s.events, first.Status.State, func(e sdk.Event) bool { return yield(e, nil) })
		if err := h.record(ctx, MethodStream, s.task.id, start, err); err != nil && !errors.Is(err, errDisconnected) {
			yield(nil, err)
		}
	}
}

// SubscribeToTask implements a2asrv.RequestHandler: the task as it
// stands, then its updates until it ends or waits for input. It reads
// the log, so it works for a task started before the node restarted. A
// task that has ended is unsupported_operation, as the protocol says;
// GetTask reads it.
func (h *requestHandler) SubscribeToTask(ctx context.Context, req *sdk.SubscribeToTaskRequest) iter.Seq2[sdk.Event, error] {
	markHandled(ctx)
	return func(yield func(sdk.Event, error) bool) {
		start, id := time.Now(), string(req.ID)
		key, f, t, err := h.load(ctx, id)
		if err == nil && f.state(t).Terminal() {
			err = sdk.NewError(sdk.ErrUnsupportedOperation, fmt.Sprintf("task %s has ended (%s): %s reads it; a message with contextId %s and no taskId starts a new task in its context", id, stateName(ctx, f.state(t)), name(ctx, MethodGet), f.conv))
		}
		var events iter.Seq2[*views.Event, error]
		if err == nil && !f.ended(t) {
			fctx, stop := context.WithCancel(ctx)
			defer stop()
			events, err = h.host.FollowConversation(fctx, key, f.head)
			err = fromHost(err)
		}
		if err != nil {
			yield(nil, h.record(ctx, MethodResubscribe, id, start, err))
			return
		}
		task := f.task(t, nil)
		if !yield(task, nil) {
			_ = h.record(ctx, MethodResubscribe, id, start, errDisconnected)
			return
		}
		if events != nil {
			err = h.follow(ctx, f, t, events, task.Status.State, func(e sdk.Event) bool { return yield(e, nil) })
		}
		if err := h.record(ctx, MethodResubscribe, id, start, err); err != nil && !errors.Is(err, errDisconnected) {
			yield(nil, err)
		}
	}
}

// ListTasks implements a2asrv.RequestHandler: not offered (jido-bus
// conv ls --project lists a project's conversations).
func (h *requestHandler) ListTasks(ctx context.Context, _ *sdk.ListTasksRequest) (*sdk.ListTasksResponse, error) {
	markHandled(ctx)
	err := sdk.NewError(sdk.ErrUnsupportedOperation, name(ctx, MethodList)+" is not offered: a context is a conversation; jido-bus conv ls --project PROJECT lists them")
	return nil, h.record(ctx, MethodList, "", time.Now(), err)
}

// noPush is the error of every push configuration method.
func noPush(ctx context.Context) error {
	return sdk.NewError(sdk.ErrPushNotificationNotSupported, "this agent sends no push notifications: follow a task with "+name(ctx, MethodStream)+" or "+name(ctx, MethodResubscribe))
}

// unsupported records and returns err for a method the agent does not
// offer.
func (h *requestHandler) unsupported(ctx context.Context, method string, err error) error {
	markHandled(ctx)
	return h.record(ctx, method, "", time.Now(), err)
}

// GetTaskPushConfig implements a2asrv.RequestHandler: no push.
func (h *requestHandler) GetTaskPushConfig(ctx context.Context, _ *sdk.GetTaskPushConfigRequest) (*sdk.PushConfig, error) {
	return nil, h.unsupported(ctx, "tasks/pushNotificationConfig/get", noPush(ctx))
}

// ListTaskPushConfigs implements a2asrv.RequestHandler: no push.
func (h *requestHandler) ListTaskPushConfigs(ctx context.Context, _ *sdk.ListTaskPushConfigRequest) (*sdk.ListTaskPushConfigResponse, error) {
	return nil, h.unsupported(ctx, "tasks/pushNotificationConfig/list", noPush(ctx))
}

// CreateTaskPushConfig implements a2asrv.RequestHandler: no push.
func (h *requestHandler) CreateTaskPushConfig(ctx context.Context, _ *sdk.PushConfig) (*sdk.PushConfig, error) {
	return nil, h.unsupported(ctx, "tasks/pushNotificationConfig/set", noPush(ctx))
}

// DeleteTaskPushConfig implements a2asrv.RequestHandler: no push.
func (h *requestHandler) DeleteTaskPushConfig(ctx context.Context, _ *sdk.DeleteTaskPushConfigRequest) error {
	return h.unsupported(ctx, "tasks/pushNotificationConfig/delete", noPush(ctx))
}

// GetExtendedAgentCard implements a2asrv.RequestHandler: the card with
// everything the public card leaves out (card.go); only a caller the
// front door let in reaches it.
func (h *requestHandler) GetExtendedAgentCard(ctx context.Context, _ *sdk.GetExtendedAgentCardRequest) (*sdk.AgentCard, error) {
	markHandled(ctx)
	start := time.Now()
	card, err := h.card(ctx)
	if err := h.record(ctx, methodExtendedCard, "", start, err); err != nil {
		return nil, err
	}
	return card, nil
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
		err = bus.Errorf(bus.ReasonInvalidRequest, "JSON-RPC request refused: method %q is unknown, or the request is not JSON-RPC 2.0 (A2A 1.0 methods are SendMessage, GetTask, …; A2A 0.3 methods message/send, tasks/get, …)", method)
	}
	_ = h.record(ctx, method, "", start, err)
}
