// Command subscriber prints every event an agent emits, once and in order,
// across its own restarts and the node's: go run ./examples/subscriber c1
//
// Live, NATS delivers an emit at most once, while connected: what is
// published while a subscriber is down, reconnecting or too slow is missed.
// But each emit is in the node's log before it is published, and its
// headers name its place there (Jido-Seq, Jido-Emit-Index). So: keep the
// last position processed in a file; subscribe; read the log after that
// position (jido.api.log.emits); take live messages, dropping those at or
// before it; read the log first again whenever one may have been missed.
// A kill -9 between printing and saving prints that event again: save the
// position with your own effect's result to make it exactly once.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	cejs "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2" // reads binary mode from any *nats.Msg
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
)

func main() {
	server := flag.String("s", cmp.Or(os.Getenv("NATS_URL"), nats.DefaultURL), "the node's NATS URL")
	file := flag.String("pos", "subscriber.pos", "the file that keeps the last position processed")
	flag.Parse()
	agent := flag.Arg(0)
	if agent == "" {
		log.Fatal("usage: subscriber [-s NATS-URL] [-pos FILE] AGENT-ID")
	}
	stop := make(chan os.Signal, 1) // Ctrl-C or kill: stop between two events
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	saved, _ := os.ReadFile(*file) // none yet: from the start
	pos := parse(string(saved))

	live := make(chan *nats.Msg, 4096)
	nc, err := nats.Connect(*server, nats.MaxReconnects(-1),
		nats.ReconnectHandler(func(*nats.Conn) { live <- nil })) // nil: look in the log
	check(err)
	sub, err := nc.ChanSubscribe("jido.emit."+agent+".>", live)
	check(err)
	check(nc.Flush()) // subscribed before the first read

	process := func(p [2]uint64, ev *event.Event) {
		if p[0] < pos[0] || p[0] == pos[0] && p[1] <= pos[1] {
			return // processed already
		}
		fmt.Printf("%d.%d %s %s %s\n", p[0], p[1], ev.Type(), ev.ID(), ev.Data())
		pos = p
		check(os.WriteFile(*file+".new", fmt.Appendf(nil, "%d.%d", p[0], p[1]), 0o644))
		check(os.Rename(*file+".new", *file))
	}
	missed := func() uint64 { // grows with every reconnect and every message dropped
		dropped, _ := sub.Dropped()
		return nc.Stats().Reconnects + uint64(dropped)
	}
	var readAt uint64   // missed() when the log was last read
	readLog := func() { // everything after pos, page by page
		readAt = missed()
		for more := true; more && len(stop) == 0; {
			var page struct {
				Emits []struct {
					Position string
					Event    event.Event
				}
				More  bool
				Error *struct{ Type, Message string }
			}
			req := fmt.Sprintf(`{"stream":"agent/%s","after":"%d.%d"}`, agent, pos[0], pos[1])
			msg, err := nc.Request("jido.api.log.emits", []byte(req), 5*time.Second)
			if err != nil || json.Unmarshal(msg.Data, &page) != nil {
				time.Sleep(time.Second) // the node is away: ask again
				continue
			}
			if page.Error != nil && page.Error.Type != "not_found" { // not_found: no such agent yet
				log.Fatal("subscriber: ", page.Error.Message)
			}
			for _, e := range page.Emits {
				process(parse(e.Position), &e.Event)
			}
			more = page.More
		}
	}
	for readLog(); ; {
		select {
		case <-stop:
			return
		case m := <-live:
			if m == nil || readAt != missed() { // the log first: it has what was missed, in order
				readLog()
			}
			if m != nil && m.Header.Get("Jido-Emit-Index") != "" { // else a lifecycle signal, not in the log
				ev, err := binding.ToEvent(context.Background(), cejs.NewMessage(m))
				check(err)
				process(parse(m.Header.Get("Jido-Seq")+"."+m.Header.Get("Jido-Emit-Index")), ev)
			}
		}
	}
}

// parse reads a position, "SEQ.INDEX".
func parse(s string) (p [2]uint64) {
	fmt.Sscanf(s, "%d.%d", &p[0], &p[1])
	return p
}

func check(err error) {
	if err != nil {
		log.Fatal("subscriber: ", err)
	}
}
