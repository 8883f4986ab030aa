package conversation

import (
	"encoding/json"
	"math"

	"github.com/jido-bus/jido-bus/bus"
)

// Data is the data of any conversation event: the union of the members the
// schemas define, so that an entry is decoded once, whatever its
// type, and every read model reads what it needs from the same value. Each
// member is documented with the types that carry it; the schemas say which
// are required.
type Data struct {
	// started
	ProjectID      string      `json:"project_id,omitempty"`
	ConversationID string      `json:"conversation_id,omitempty"`
	Title          string      `json:"title,omitempty"`
	System         string      `json:"system,omitempty"`
	Parent         *ForkOrigin `json:"parent,omitempty"`
	// started: this conversation's model configuration and loop limits,
	// over the project's (nil: the project's)
	LLM    *LLMConfig `json:"llm,omitempty"`
	Limits *Limits    `json:"limits,omitempty"`
	// started: what the whole conversation may spend (nil: no limit)
	Budget *Budget `json:"budget,omitempty"`
	// started, mode: the conversation's permission mode (ModePlan,
	// ModeAsk, ModeAuto; absent: ModeAuto), from then on
	Mode string `json:"mode,omitempty"`
	// started: the git worktree the conversation works in (nil: the
	// project's checkout)
	Worktree *Worktree `json:"worktree,omitempty"`
	// started, of a delegated conversation: its parent and depth
	// (DelegateTool); tool.completed and tool.failed of a delegate call:
	// ConversationID names the child.
	Delegated *Delegation `json:"delegated,omitempty"`
	// started: the tools the conversation may call (nil: every tool its
	// project offers); a delegated conversation gets a subset of its
	// parent's.
	Tools *[]string `json:"tools,omitempty"`
	// started: the project's assistant drives the conversation (its
	// loop is on); false for a conversation driven from outside.
	Assistant bool `json:"assistant,omitempty"`
	// started: the version of the loop's decisions the conversation was
	// started under (LoopVersion then); absent is 1. The loop keeps
	// deciding an old conversation as its version did, so that `log
	// replay --verify` of a log written before a change of the loop still
	// re-decides it exactly.
	Loop int `json:"loop,omitempty"`
	// started, of a fork: how many of the parent's events follow it,
	// copied; the loop folds them without acting on them.
	History int `json:"history,omitempty"`
	// started, llm.requested, llm.completed
	Model string `json:"model,omitempty"`
	// llm.requested
	Provider string `json:"provider,omitempty"`
	// llm.requested: the step of the turn, from 1
	Step int `json:"step,omitempty"`
	// user.message, assistant.message, assistant.delta
	Text  string `json:"text,omitempty"`
	Index int    `json:"index,omitempty"`
	// llm.requested, llm.failed: 1 for a first call, above 1 for a retry
	Attempt int `json:"attempt,omitempty"`
	// llm.completed, assistant.message: how many tool.requested the answer
	// produced
	ToolCalls int `json:"tool_calls,omitempty"`
	// llm.completed
	Usage      *Usage `json:"usage,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	// llm.completed: what the call cost in USD, from the operator's price
	// table for the model (absent: no price configured)
	CostUSD float64 `json:"cost_usd,omitempty"`
	// budget.exceeded: BudgetTokens or BudgetCost, the budget's limit and
	// what the conversation had used when it was reached
	What  string  `json:"what,omitempty"`
	Limit float64 `json:"limit,omitempty"`
	Used  float64 `json:"used,omitempty"`
	// llm.completed, llm.failed: milliseconds
	LatencyMS int64 `json:"latency_ms,omitempty"`
	// llm.failed, tool.failed
	Error     *bus.Error `json:"error,omitempty"`
	Retryable bool       `json:"retryable,omitempty"`
	// llm.failed: the delay before the next attempt in milliseconds, 0
	// when absent (not retried; Retryable with 0 is a retry at once), and
	// the provider's HTTP status when there was one
	RetryInMS int64 `json:"retry_in_ms,omitempty"`
	Status    int   `json:"status,omitempty"`
	// tool.*
	CallID string `json:"call_id,omitempty"`
	// tool.requested, tool.approval.requested
	Name string          `json:"name,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	// tool.requested: the arguments were not valid JSON; Args is then
	// absent and ArgsText holds them as the model sent them
	ArgsError string `json:"args_error,omitempty"`
	ArgsText  string `json:"args_text,omitempty"`
	// tool.approval: DecisionApprove or DecisionDeny, RememberConversation
	// or "", and who decided
	Decision string `json:"decision,omitempty"`
	Remember string `json:"remember,omitempty"`
	By       string `json:"by,omitempty"`
	// tool.completed: Output inline, or OutputRef to an artifact
	Output    json.RawMessage `json:"output,omitempty"`
	OutputRef *ArtifactRef    `json:"output_ref,omitempty"`
	// tool.completed, tool.failed: milliseconds
	DurationMS int64 `json:"duration_ms,omitempty"`
	// tool.timeout: the limit exceeded; tool.approval.requested: the wait
	// before the automatic deny; milliseconds
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// tool.cancelled, cancel, resume, stopped, tool.approval.requested (why
	// approval is needed), tool.approval (why the decision)
	Reason string `json:"reason,omitempty"`

	// Window is, in conversation.llm.requested, the context window of the
	// model asked, in tokens, as the node's operator configured it (or
	// the default); ContextTokens the estimate of the context sent and
	// ContextDropped how many of the oldest messages the last-resort
	// guard of llm_context has dropped so far (see Compacted).
	Window         int64 `json:"window,omitempty"`
	ContextTokens  int64 `json:"context_tokens,omitempty"`
	ContextDropped int   `json:"context_dropped,omitempty"`
	// Summary, Replaces, TokensBefore and TokensAfter are
	// conversation.compacted's: the model's summary, what it stands for
	// and the context's estimated size before and after.
	Summary      string        `json:"summary,omitempty"`
	Replaces     *CompactRange `json:"replaces,omitempty"`
	TokensBefore int64         `json:"tokens_before,omitempty"`
	TokensAfter  int64         `json:"tokens_after,omitempty"`
}

// CompactRange is what a conversation.compacted summary stands for: the
// messages of llm_context from stream sequence FromSeq to ToSeq (every
// message up to ToSeq but the first task), Messages of them.
type CompactRange struct {
	FromSeq  uint64 `json:"from_seq"`
	ToSeq    uint64 `json:"to_seq"`
	Messages int    `json:"messages"`
	// Answers is how many of them were the model's answers (assistant
	// messages), those an earlier summary replaced included: the summary
	// says so to the model, which then knows how far the conversation
	// went (and the scripted provider counts its turns by it).
	Answers int `json:"answers,omitempty"`
}

// ForkOrigin is where a forked conversation branched off its parent.
type ForkOrigin struct {
	Conversation string `json:"conversation"` // the parent's key
	Seq          uint64 `json:"seq"`          // the parent's stream sequence the history ends at
	EventID      string `json:"event_id"`     // the id of the parent's event at Seq
}

// Usage is the token usage of one LLM call.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Budget is what a conversation may spend over its whole life, counted
// from the usage and cost its conversation.llm.completed events record
// (a fork counts its own calls, not the history it copies). A zero member
// sets no limit.
type Budget struct {
	// MaxTokens bounds input plus output tokens.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxCostUSD bounds the cost_usd summed; calls of a model without a
	// price cost nothing here.
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// Check refuses a negative or non-finite budget (invalid_request). nil
// is no budget.
func (b *Budget) Check() error {
	if b == nil {
		return nil
	}
	if b.MaxTokens < 0 {
		return bus.Errorf(bus.ReasonInvalidRequest, "budget.max_tokens %d is negative: give the most tokens (input plus output) the conversation may use, or leave it out for no limit", b.MaxTokens)
	}
	if b.MaxCostUSD < 0 || math.IsNaN(b.MaxCostUSD) || math.IsInf(b.MaxCostUSD, 0) {
		return bus.Errorf(bus.ReasonInvalidRequest, "budget.max_cost_usd %v is not an amount of 0 or more: give the most USD the conversation may spend, or leave it out for no limit", b.MaxCostUSD)
	}
	return nil
}

// AddUSD adds two amounts of USD rounded to a billionth of a dollar,
// so that a sum of costs reads as an amount and not as float noise
// (0.1 + 0.2 is 0.3).
func AddUSD(a, b float64) float64 { return math.Round((a+b)*1e9) / 1e9 }

// ArtifactRef names a large payload stored once, by content, outside the
// log: ID is "sha256:<hex>", Size its length in bytes, Preview its first
// bytes for people and for llm_context.
type ArtifactRef struct {
	ID        string `json:"id"`
	Size      int64  `json:"size"`
	MediaType string `json:"media_type,omitempty"`
	Preview   string `json:"preview,omitempty"`
}

// LLMConfig is a conversation's model configuration, over the project's
// (.jido/config.yaml). Zero members keep the project's value. It names the
// environment variable holding the API key and never holds a key: the
// schema refuses an api_key member.
type LLMConfig struct {
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	BaseURL   string `json:"base_url,omitempty"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Temperature is a pointer because 0 is a temperature.
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	TimeoutMS   int64    `json:"timeout_ms,omitempty"`
}

// Check refuses a conversation's settings that name an endpoint or a key
// variable (invalid_request): those are the node operator's alone. nil is
// the project's settings.
func (c *LLMConfig) Check() error {
	if c == nil {
		return nil
	}
	if c.BaseURL != "" || c.APIKeyEnv != "" {
		return bus.Errorf(bus.ReasonInvalidRequest, "llm: base_url and api_key_env are refused: which key is sent where is the node operator's choice (serve --provider, or providers: in the serve config), never a conversation's (a client could otherwise send a key of the node to an address of its choosing); a conversation may choose provider (by name), model, temperature, max_tokens and timeout_ms")
	}
	return nil
}

// Limits bound one turn of the loop; a zero member takes its default
// (WithDefaults).
type Limits struct {
	MaxSteps      int `json:"max_steps,omitempty"`
	MaxToolCalls  int `json:"max_tool_calls,omitempty"`
	ParallelTools int `json:"parallel_tools,omitempty"`
}

// LoopVersion is the version of the loop's decisions a conversation
// started now gets (Data.Loop). Raise it with every change to what the
// loop decides from the same events, and keep the old decision for
// conversations of lower versions.
//
//	1: the first loop
//	2: a decided or cancelled approval withdraws its timeout (schedule_cancel)
const LoopVersion = 2

// Default limits, as the schema of conversation.started documents them.
const (
	DefaultMaxSteps      = 25
	DefaultMaxToolCalls  = 50
	DefaultParallelTools = 4
)

// Bounds of a conversation's Limits when it is started (Check): a turn
// of more LLM calls or tool calls than these is not a conversation but a
// runaway (each step a paid model call), and more calls at once than
// MaxParallelTools only queue at the project's runner.
const (
	MaxMaxSteps      = 1000
	MaxMaxToolCalls  = 10000
	MaxParallelTools = 64
)

// Check refuses limits out of their bounds (1 to the Max constants; 0 or
// absent is the default) with invalid_request naming the member and the
// bound. nil is the defaults.
func (l *Limits) Check() error {
	if l == nil {
		return nil
	}
	for _, m := range []struct {
		name     string
		v, bound int
	}{
		{"max_steps", l.MaxSteps, MaxMaxSteps},
		{"max_tool_calls", l.MaxToolCalls, MaxMaxToolCalls},
		{"parallel_tools", l.ParallelTools, MaxParallelTools},
	} {
		if m.v < 0 || m.v > m.bound {
			return bus.Errorf(bus.ReasonInvalidRequest, "limits.%s %d is out of bounds: give 1 to %d (or leave it out for the default)", m.name, m.v, m.bound)
		}
	}
	return nil
}

// WithDefaults returns l (which may be nil) with every member that is not
// positive set to its default.
func (l *Limits) WithDefaults() Limits {
	var out Limits
	if l != nil {
		out = *l
	}
	if out.MaxSteps <= 0 {
		out.MaxSteps = DefaultMaxSteps
	}
	if out.MaxToolCalls <= 0 {
		out.MaxToolCalls = DefaultMaxToolCalls
	}
	if out.ParallelTools <= 0 {
		out.ParallelTools = DefaultParallelTools
	}
	return out
}
