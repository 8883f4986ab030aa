// Command toolservice offers a tool to a jido-bus node's projects over
// NATS, as a service in any language would: it announces svc_wordcount on
// jido.tools.announce (again every third of its ttl, so that the tool
// lives while the service does), answers each call on
// jido.tools.call.wordcount, and withdraws the tool when it stops.
//
//	go run ./examples/toolservice --nats-url nats://127.0.0.1:4223
//	jido-bus project call web svc_wordcount '{"text":"one two three"}'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

const (
	subject = "jido.tools.call.wordcount"
	ttl     = 15 * time.Second
)

var announce = map[string]any{
	"name":        "svc_wordcount",
	"description": "Count the words of a text.",
	"input_schema": json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},` +
		`"required":["text"],"additionalProperties":false}`),
	"output_schema": json.RawMessage(`{"type":"object","properties":{"words":{"type":"integer"}}}`),
	"safety":        map[string]bool{"reads": true},
	"projects":      []string{"*"},
	"subject":       subject,
	"ttl":           ttl.Seconds(),
}

func main() {
	url := flag.String("nats-url", nats.DefaultURL, "the node's NATS server")
	flag.Parse()
	if err := run(*url); err != nil {
		fmt.Fprintln(os.Stderr, "toolservice:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	nc, err := nats.Connect(url, nats.Name("toolservice"))
	if err != nil {
		return err
	}
	defer nc.Drain()
	// Subscribed before announced: a call may come at once.
	if _, err := nc.Subscribe(subject, answer); err != nil {
		return err
	}
	body, _ := json.Marshal(announce)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for first := true; ; first = false {
		rep, err := nc.Request("jido.tools.announce", body, 5*time.Second)
		switch {
		case err != nil:
			fmt.Fprintln(os.Stderr, "toolservice: announce:", err) // the next tick tries again
		case !strings.Contains(string(rep.Data), `"ok":true`):
			return fmt.Errorf("announce refused: %s", rep.Data)
		case first:
			fmt.Fprintln(os.Stderr, "toolservice: svc_wordcount announced")
		}
		select {
		case <-ctx.Done():
			w, _ := json.Marshal(map[string]string{"name": "svc_wordcount", "subject": subject})
			_, _ = nc.Request("jido.tools.withdraw", w, 5*time.Second)
			return nil
		case <-tick.C:
		}
	}
}

// answer replies to one call: {"output":…} or {"error":{type,message}}.
func answer(m *nats.Msg) {
	var req struct {
		Args struct {
			Text string `json:"text"`
		} `json:"args"`
	}
	var rep any
	if err := json.Unmarshal(m.Data, &req); err != nil {
		rep = map[string]any{"error": map[string]string{"type": "invalid_args", "message": err.Error()}}
	} else {
		rep = map[string]any{"output": map[string]int{"words": len(strings.Fields(req.Args.Text))}}
	}
	data, _ := json.Marshal(rep)
	_ = m.Respond(data)
}
