package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/goroutines"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
	"github.com/jido-bus/jido-bus/projects/secrets"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// Host is what the executors need of the projects engine: a project's
// tools (as its policy offers them), the one runner every call goes
// through, and its model settings.
//
// The executors call it from their own goroutines, never from an agent's
// queue, so a host may wait (for the engine to start after a restart)
// until ctx ends.
type Host interface {
	Tools(ctx context.Context, project string) ([]tools.Spec, error)
	CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error)
	// NeedsApproval reports whether a person must approve tool before it
	// runs — the project's policy asks, or the conversation's permission
	// mode (conversation.ModeAsk) does for a tool that writes or runs —
	// and why.
	NeedsApproval(ctx context.Context, project, tool, mode string) (bool, string, error)
	// Settings returns the project's assistant settings (.jido/config.yaml)
	// and its root, against which a scripted provider's file is read.
	Settings(ctx context.Context, project string) (Settings, string, error)
}

// Config configures an Assistant.
type Config struct {
	Host Host
	// Log is the node's event log, from which each LLM call's context is
	// folded.
	Log *eventlog.Log
	// Publish sends a transient event (an assistant delta) to the
	// conversation's subscribers; it is never logged.
	Publish func(key string, sig bus.Signal) error
	// NewProvider makes the provider of an LLM call; nil means llm.New
	// for the endpoint of Providers the settings name, with the key read
	// through Getenv.
	NewProvider func(s LLMSettings, root string) (llm.Provider, error)
	Logger      *slog.Logger
	// Providers are the node's model providers, by name
	// (llm.Endpoints: the defaults and its operator's); nil means
	// llm.DefaultEndpoints. The scripted provider is always there.
	Providers []llm.Endpoint
	// Secrets are the node's secrets, scrubbed from every text a provider
	// call returns (with the providers' keys as Getenv reads them).
	Secrets *secrets.Set
	// Getenv reads the environment for keys (os.Getenv when nil).
	Getenv func(string) string
	// HTTPClient is the providers' client (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Limits are the log's: an answer or a tool call too large for an
	// event is recorded cut short or failed, never lost.
	Limits bus.Limits
	// Backoff chooses the delay before the next attempt of a failed LLM
	// call (llm.Backoff with a random jitter when nil).
	Backoff func(attempt int, retryAfter time.Duration) time.Duration
	// AskHook asks a NATS hook service; RunHook runs a project's local
	// command hook under its sandbox. Without them a configured hook gets
	// the project's hooks.default, stated in its decision.
	AskHook HookAsker
	RunHook HookRunner
	// Spent, when set, hears of every conversation.llm.completed handed
	// to its conversation: the project, the model, the usage and the cost
	// (priced false: the operator gave the model no price). The node
	// counts them in its metrics.
	Spent func(project, model string, usage llm.Usage, costUSD float64, priced bool)
	// Delegate runs a delegate tool call (DelegateTool): it starts the
	// child conversation, or finds it after a restart, and waits for its
	// answer. Nil: a delegate call fails, as a tool this node lacks.
	Delegate func(ctx context.Context, c DelegateCall) DelegateResult
	// ContextWindow is the context window, in tokens, of a model whose
	// provider gives it none (llm.Endpoint.Windows); 0 means
	// llm.DefaultWindow.
	ContextWindow int64
}

// Assistant holds the executors of the loop's directives and what they
// have in flight.
type Assistant struct {
	cfg  Config
	ctxs *contexts
	log  *slog.Logger

	// ctx ends at Close: work in flight then stops without recording an
	// outcome, which the restart records as interrupted.
	ctx    context.Context
	cancel context.CancelFunc
	// work owns the goroutines of the work in flight; Close waits for
	// them, and none starts once it has begun.
	work goroutines.Group

	mu       sync.Mutex
	inflight map[string]map[string]context.CancelCauseFunc // conversation → request or call id
	// providers are made once per settings and root: a client keeps its
	// connections, and a scripted provider its count of failures played.
	providers map[providerKey]llm.Provider
	// endpoints are cfg.Providers by name; scrub hides cfg.Secrets and
	// every endpoint's key in what a provider returns.
	endpoints map[string]llm.Endpoint
	scrub     *secrets.Set
}

type providerKey struct {
	settings string // LLMSettings as JSON
	root     string
}

// errTurnCancelled is the cause of work cancelled by conversation.cancel.
var errTurnCancelled = errors.New("the turn was cancelled")

// New returns an Assistant.
func New(cfg Config) *Assistant {
	ctx, cancel := context.WithCancel(context.Background())
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	a := &Assistant{
		cfg: cfg, ctxs: newContexts(cfg.Log, maxContexts), log: log, ctx: ctx, cancel: cancel,
		inflight:  map[string]map[string]context.CancelCauseFunc{},
		providers: map[providerKey]llm.Provider{},
	}
	if a.cfg.Backoff == nil {
		a.cfg.Backoff = func(attempt int, retryAfter time.Duration) time.Duration {
			return llm.Backoff(attempt, retryAfter, rand.Float64)
		}
	}
	if a.cfg.NewProvider == nil {
		a.cfg.NewProvider = a.newProvider
	}
	if a.cfg.Providers == nil {
		a.cfg.Providers = llm.DefaultEndpoints()
	}
	a.endpoints = map[string]llm.Endpoint{}
	var keys []secrets.Value
	for _, e := range a.cfg.Providers {
		a.endpoints[e.Name] = e
		if e.KeyEnv != "" {
			keys = append(keys, secrets.Value{Label: "$" + e.KeyEnv, Secret: strings.TrimSpace(a.cfg.Getenv(e.KeyEnv))})
		}
	}
	a.scrub = a.cfg.Secrets.With(keys...)
	return a
}

// Executors returns the executors of the loop's directives, for
// runtime.Config.Executors.
func (a *Assistant) Executors() map[string]runtime.DirectiveExec {
	return map[string]runtime.DirectiveExec{
		conversation.KindLLMCall:    runtime.ExecFunc(a.execLLMCall),
		conversation.KindRunTool:    runtime.ExecFunc(a.execRunTool),
		conversation.KindRecord:     runtime.ExecFunc(execRecord),
		conversation.KindCancelTurn: runtime.ExecFunc(a.execCancelTurn),
		conversation.KindCompact:    runtime.ExecFunc(a.execCompact),
	}
}

// Close stops the work in flight without recording outcomes (a restart
// records it interrupted) and waits for it; work started afterwards does
// not run.
func (a *Assistant) Close() error {
	a.cancel()
	a.work.Wait()
	return nil
}

// start runs work for conversation key under id, cancellable by
// CancelTurn and by Close. Once Close has begun, work does not run (as
// work Close stopped, the restart records it interrupted).
// InFlight reports whether this process is making call id (an LLM
// request, a tool call) of conversation key now: a node's resume after a
// restart must not close as interrupted a call the loop decided again
// after the restart and that runs (convapi.Config.InFlight).
func (a *Assistant) InFlight(key, id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.inflight[key][id]
	return ok
}

func (a *Assistant) start(key, id string, work func(ctx context.Context)) {
	ctx, cancel := context.WithCancelCause(a.ctx)
	a.mu.Lock()
	m := a.inflight[key]
	if m == nil {
		m = map[string]context.CancelCauseFunc{}
		a.inflight[key] = m
	}
	m[id] = cancel
	a.mu.Unlock()
	done := func() {
		a.mu.Lock()
		delete(a.inflight[key], id)
		if len(a.inflight[key]) == 0 {
			delete(a.inflight, key)
		}
		a.mu.Unlock()
		cancel(nil)
	}
	if !a.work.Go(func() {
		defer done()
		work(ctx)
	}) {
		done()
	}
}

func (a *Assistant) execCancelTurn(_ context.Context, d agents.Directive, _ *runtime.ExecContext) (runtime.ExecResult, error) {
	c := d.(conversation.CancelTurn)
	a.mu.Lock()
	for _, cancel := range a.inflight[c.Conversation] {
		cancel(errTurnCancelled)
	}
	a.mu.Unlock()
	return runtime.ExecResult{}, nil
}

// execRecord hands the loop's event to the conversation.
func execRecord(_ context.Context, d agents.Directive, x *runtime.ExecContext) (runtime.ExecResult, error) {
	ev := d.(conversation.Record).Event
	if ev.Time().IsZero() {
		ev = ev.Clone()
		ev.SetTime(time.Now().UTC())
	}
	return runtime.ExecResult{}, x.Deliver(ev)
}

// deliver hands an event to the conversation; one that cannot be
// delivered (the conversation stopped meanwhile) is logged.
func (a *Assistant) deliver(x *runtime.ExecContext, typ, id, causation string, data any) bool {
	sig, err := newEvent(x.AgentID, typ, id, causation, data)
	if err == nil {
		err = x.Deliver(sig)
	}
	if err != nil {
		a.log.Warn("conversation event not delivered", "conversation", x.AgentID, "type", typ, "id", id, "err", err)
	}
	return err == nil
}

// newEvent builds a conversation event of conversation key, stamped now.
func newEvent(key, typ, id, causation string, data any) (bus.Signal, error) {
	return conversation.NewEvent(key, typ, id, causation, time.Now().UTC(), data)
}

// projectOf returns the project of conversation key.
func projectOf(key string) string {
	p, _, _ := strings.Cut(key, "/")
	return p
}

// cancelledByTurn reports whether ctx ended because the turn was
// cancelled (rather than the node closing).
func cancelledByTurn(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errTurnCancelled)
}

// provider returns the provider of the settings, made once.
func (a *Assistant) provider(s LLMSettings, root string) (llm.Provider, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	k := providerKey{string(b), root}
	a.mu.Lock()
	p, ok := a.providers[k]
	a.mu.Unlock()
	if ok {
		return p, nil
	}
	if p, err = a.cfg.NewProvider(s, root); err != nil {
		return nil, err // not kept: a key set meanwhile is read next time
	}
	p = llm.Scrubbing(p, a.scrub)
	a.mu.Lock()
	if old, ok := a.providers[k]; ok {
		p = old
	} else {
		if len(a.providers) >= maxProviders {
			// Settings come partly from clients (the model's name): the
			// cache must not grow with them. Starting afresh costs new
			// connections (and a scripted provider its failure counts).
			clear(a.providers)
		}
		a.providers[k] = p
	}
	a.mu.Unlock()
	return p, nil
}

// Bounds of what the assistant keeps in memory: providers by settings, and
// the folded llm_context of the conversations that talked last (each up
// to the read model's token budget, some hundred KB).
const (
	maxProviders = 64
	maxContexts  = 64
)

// newProvider makes the provider the settings name: one of the node's
// endpoints, with the model checked against the models it allows, or the
// scripted provider, whose script is read inside the project's root.
func (a *Assistant) newProvider(s LLMSettings, root string) (llm.Provider, error) {
	cfg := llm.Config{
		Provider: s.Provider, Model: s.Model,
		Temperature: s.Temperature, MaxTokens: s.MaxTokens, Timeout: time.Duration(s.TimeoutMS) * time.Millisecond,
	}
	name := strings.ToLower(strings.TrimSpace(s.Provider))
	if name == "" {
		// Said in one line a person can act on: where the setting goes,
		// what to write, what this node offers, and the command that
		// writes a starter for a folder that has no config at all.
		return nil, &llm.Error{Kind: llm.KindConfig, Message: fmt.Sprintf("no model: set llm.provider and llm.model in %s, e.g. llm: {provider: openai, model: gpt-4o-mini} (this node's providers: %s); without that file, 'jido-bus project init %s' writes a commented starter",
			filepath.Join(root, ".jido", "config.yaml"), strings.Join(a.providerNames(), ", "), root)}
	}
	if name == llm.ProviderScripted {
		// A script is a file of the project: read through an os.Root, so
		// that "script: ../../etc/x" or an absolute path reads nothing
		// outside it.
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, &llm.Error{Kind: llm.KindConfig, Message: fmt.Sprintf("open the project's root %s to read its llm script: %v", root, err)}
		}
		defer r.Close()
		cfg.Script, cfg.Files = s.Script, r.FS()
		return llm.New(cfg, a.cfg.Getenv, a.cfg.HTTPClient)
	}
	e, ok := a.endpoints[name]
	if !ok {
		return nil, &llm.Error{Kind: llm.KindConfig, Message: fmt.Sprintf("unknown llm provider %q: this node's providers are %s; its operator configures them (serve --provider, or providers: in the serve config)", s.Provider, strings.Join(a.providerNames(), ", "))}
	}
	if !e.Allows(s.Model) {
		return nil, &llm.Error{Kind: llm.KindConfig, Message: fmt.Sprintf("the provider %s does not offer the model %q: choose one of %s (its operator lists them: serve --provider, or providers: in the serve config)", e.Name, s.Model, strings.Join(e.Models, ", "))}
	}
	cfg.Provider, cfg.Name, cfg.BaseURL, cfg.APIKeyEnv = e.Kind, e.Name, e.BaseURL, e.KeyEnv
	return llm.New(cfg, a.cfg.Getenv, a.cfg.HTTPClient)
}

// providerNames are the names a project's llm.provider may give.
func (a *Assistant) providerNames() []string {
	names := []string{llm.ProviderScripted}
	for _, e := range a.cfg.Providers {
		names = append(names, e.Name)
	}
	return names
}

// rawArgs returns args as a JSON value, {} when empty.
func rawArgs(args json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(args))) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// convOf is the conversation's id in its project: key without its
// "<project>/".
func convOf(key string) string {
	_, conv, _ := strings.Cut(key, "/")
	return conv
}
