// Package agents is the pure layer of jido-bus: agents, actions,
// instructions, directives, skills and strategies. "Agents think, servers
// act": an agent's logic is the pure function
//
//	Cmd(agent, instructions...) -> (agent', []Directive)
//
// and everything with an effect — publishing, spawning, timers, stopping —
// comes out of it as a Directive value for the runtime (agents/runtime) to
// commit to the log and then execute, the way etcd's raft hands its caller
// a Ready.
//
// Nothing in this package starts a goroutine, imports NATS or Pebble, reads
// the clock or draws a random number (a test checks the source). Time and
// identity come from the signal being handled (Origin): emitted signal ids
// are <origin-id>.<index> and Env.Now is the signal's time. So the same
// agent and instruction give the same new state and byte-identical
// directives, and replaying the log rebuilds the agent exactly.
//
// # Defining an agent type
//
// Spec names the agent's own state schema, actions and routes, and the
// skills it is assembled from; Define checks it all once, at program start,
// and returns an immutable *Definition (a bad definition is a *DefineError
// naming the agent, the skill and the key). A Skill bundles actions,
// routes, a state schema and a config schema; each attached skill keeps its
// state under its own state key, and UseAs attaches a skill a second time
// under an alias with its own key and route prefix.
//
// # Running it
//
// Definition.New makes an Agent; Step handles one signal (skill hooks,
// routing, Cmd); Cmd runs instructions directly. A failing instruction
// never panics and never stops the others: it leaves the state as it was
// and yields an Error directive whose Context says where it failed.
// DirectiveCodec encodes directives to their JSON log form, {"kind":…},
// and back; EncodeState and Definition.Restore do the same for state.
//
// The runtime's loop for one agent is then:
//
//  1. take the next accepted signal;
//  2. agent', directives := Step(agent, signal);
//  3. append signal, directives (DirectiveCodec.EncodeAll) and the new
//     state version to the agent's log stream in one batch, and wait for it
//     to be durable when a caller waits for the reply;
//  4. answer the caller, then execute the directives in order.
//
// Recovery repeats step 2 over the logged signals from the latest snapshot
// (Definition.Restore) and gets the same directives back.
package agents
