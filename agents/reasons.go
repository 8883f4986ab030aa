package agents

// Error types of the Error directives Cmd produces. Like bus's Reason
// constants they are machine words that reach users (error replies, the
// jido.agent.error signal, the log): new ones may be added, none is ever
// renamed. An action's own error keeps its type when it is a *bus.Error.
const (
	ReasonNoRoute          = "no_route"          // no route matches the signal's type
	ReasonUnknownAction    = "unknown_action"    // an instruction names an action the agent lacks
	ReasonInvalidParams    = "invalid_params"    // params fail the action's schema or cannot be decoded
	ReasonActionFailed     = "action_failed"     // the action returned an error
	ReasonInvalidState     = "invalid_state"     // a state operation could not be applied
	ReasonTransitionDenied = "transition_denied" // the strategy refused the outcome
	ReasonInvalidDirective = "invalid_directive" // a directive the action returned is malformed
	ReasonPanic            = "panic"             // an action or hook panicked; Cmd recovered
	ReasonHookFailed       = "hook_failed"       // a skill hook returned an error
	ReasonTooDeep          = "too_deep"          // Result.Then chains nested beyond MaxThenDepth
	ReasonNoDefinition     = "no_definition"     // Cmd was given an Agent not made by a Definition
)

// Contexts say where in Cmd an Error directive arose.
const (
	ContextRouting     = "routing"     // turning a signal into an instruction
	ContextInstruction = "instruction" // resolving the instruction's action
	ContextParams      = "params"      // validating or decoding params
	ContextAction      = "action"      // the action's Run
	ContextState       = "state"       // applying the result to state
	ContextStrategy    = "strategy"    // the strategy's admission check
	ContextDirective   = "directive"   // checking a returned directive
	ContextPanic       = "panic"       // a recovered panic
	ContextHook        = "hook"        // a skill's HandleSignal or TransformResult hook
	ContextAgent       = "agent"       // the agent value itself
)
