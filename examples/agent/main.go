// Command agent runs a jido-bus node with an agent type of its own: a
// greeter that counts whom it greeted and emits a greeting. Run it, then
// start an agent and call it with the NATS CLI:
//
//	go run ./examples/agent
//	bin/nats -s nats://127.0.0.1:4223 req jido.api.agent.start '{"type":"greeter","id":"g1"}'
//	bin/nats -s nats://127.0.0.1:4223 req jido.agent.g1.greeter.greet '{"name":"Ada"}'
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/node"
)

// greeter is the agent type: its state, one action, and the route that
// sends greeter.greet signals to it. The action is pure: it returns the
// new state (Ops) and what should happen (Directives); the runtime commits
// both to the log before it emits anything.
var greeter = agents.MustDefine(agents.Spec{
	Name:   "greeter",
	Schema: `{"type":"object","properties":{"greeted":{"type":"number","default":0}}}`,
	Actions: []agents.Action{{
		Name:   "greet",
		Params: `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`,
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

func main() {
	listen := flag.String("listen", "127.0.0.1:4223", "where the node's embedded NATS server listens")
	dataDir := flag.String("data-dir", os.TempDir()+"/jido-agent-example", "where the node keeps its log")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := node.Start(ctx, node.Config{
		DataDir: *dataDir,
		NATS:    node.NATSConfig{Listen: *listen},
		Types:   func(r *agents.Registry) error { return r.Register(greeter) },
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent example:", err)
		os.Exit(1)
	}
	fmt.Println("node up at", n.URL(), "with the greeter type; Ctrl-C stops it")
	<-ctx.Done()
	// The shutdown gets 10 s to let what the node took finish.
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = n.Shutdown(shutdown)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent example:", err)
		os.Exit(1)
	}
}
