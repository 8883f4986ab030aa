package node_test

import (
	"context"
	"fmt"
	"os"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/node"
)

// Embedding a node: an agent type of your own beside the built-ins, a node
// in process (its NATS reachable by any client at n.URL()), and a call
// that returns once the decision is committed.
func Example() {
	greeter := agents.MustDefine(agents.Spec{
		Name:   "greeter",
		Schema: `{"type":"object","properties":{"greeted":{"type":"number","default":0}}}`,
		Actions: []agents.Action{{
			Name: "greet",
			Run: agents.Typed(func(env agents.Env, p struct{ Name string }) (agents.Result, error) {
				hello, err := agents.NewEmit("greeter.said", map[string]string{"text": "Hello, " + p.Name})
				return agents.Result{
					Ops:        []agents.StateOp{agents.Set{Values: map[string]any{"greeted": env.State.Number("greeted") + 1}}},
					Directives: []agents.Directive{hello},
				}, err
			}),
		}},
		Routes: []agents.Route{{Pattern: "greeter.greet", Action: "greet"}},
	})

	dir, _ := os.MkdirTemp("", "jido-bus-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	n, err := node.Start(ctx, node.Config{
		DataDir: dir,
		NATS:    node.NATSConfig{Listen: "127.0.0.1:0"},
		Types:   func(r *agents.Registry) error { return r.Register(greeter) },
	})
	if err != nil {
		panic(err)
	}
	defer n.Shutdown(context.Background())

	rt := n.Runtime()
	if _, err := rt.Start(ctx, runtime.StartRequest{Type: "greeter", ID: "g1"}); err != nil {
		panic(err)
	}
	sig, _ := bus.NewSignal("greeter.greet", "example", map[string]string{"name": "Ada"})
	reply, err := rt.Call(ctx, "g1", sig)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(reply.State), reply.Version)
	// Output: {"greeted":1} 1
}
