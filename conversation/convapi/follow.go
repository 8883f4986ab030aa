package convapi

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
)

// deltaBuffer bounds the assistant deltas a follower holds for a slow
// client; past it NATS drops them (they are transient: the final message
// carries the whole text).
const deltaBuffer = 256

// Events returns conversation key's logged conversation events in order,
// read from its stream; none (and no error) when it never started.
func (s *Service) Events(_ context.Context, key string) ([]*views.Event, error) {
	var out []*views.Event
	for e, err := range s.log.ReadStream(conversation.Stream(key), eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if errors.Is(err, eventlog.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read conversation %s: %w", key, err)
		}
		out = append(out, views.Decode(e))
	}
	return out, nil
}

// followed is one item a follower hands from its log reader.
type followed struct {
	entry eventlog.Entry
	err   error
}

// Follow follows conversation key from when it returns: its iterator
// yields key's logged events with Seq > after, in order and without a
// gap, and the transient assistant deltas (Seq 0) published since the
// call, as they come, until ctx ends (it then stops without an error) or
// it fails. What it holds is released when ctx ends, whether or not the
// iterator ran.
//
// The stream comes through a log subscription (in order, without a gap,
// from disk wherever the reader stands: a node restarted since the task
// began serves it the same), the assistant deltas from NATS, where alone
// they are published (<prefix>.emit.<key>.conversation.assistant.delta).
// Both are subscribed before it returns, so that a caller that follows
// before it sends a message hears every delta of the answer; both end
// with ctx.
func (s *Service) Follow(ctx context.Context, key string, after uint64) (iter.Seq2[*views.Event, error], error) {
	deltas := make(chan *nats.Msg, deltaBuffer)
	sub, err := s.bus.Conn().ChanSubscribe(s.bus.Subjects().Emit(key, conversation.AssistantDelta), deltas)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "follow conversation %s: subscribe to its deltas: %v", key, err)
	}
	ls, err := s.log.Subscribe(eventlog.SubscribeOptions{Stream: conversation.Stream(key), From: after + 1, Types: conversation.TypePattern})
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("follow conversation %s: %w", key, err)
	}
	entries := make(chan followed)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer ls.Close()
		defer func() { _ = sub.Unsubscribe() }()
		for {
			e, err := ls.Next(ctx)
			if ctx.Err() != nil {
				return
			}
			if _, corrupt := errors.AsType[*eventlog.CorruptError](err); corrupt {
				continue
			}
			select {
			case entries <- followed{e, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return func(yield func(*views.Event, error) bool) {
		for {
			// A delta published after the entries already read is still
			// taken after them: entries first, when both wait.
			select {
			case f := <-entries:
				if !yieldEntry(f, yield) {
					return
				}
				continue
			default:
			}
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case f := <-entries:
				if !yieldEntry(f, yield) {
					return
				}
			case msg := <-deltas:
				d, err := s.bus.Decode(msg)
				if err != nil {
					continue
				}
				ev := &views.Event{Type: d.Signal.Type(), ID: d.Signal.ID(), CausationID: conversation.CausationID(d.Signal)}
				if data, err := conversation.DecodeData(d.Signal.Data()); err == nil {
					ev.Data = data
				}
				if !yield(ev, nil) {
					return
				}
			}
		}
	}, nil
}

// yieldEntry yields one followed entry, and reports whether to go on.
func yieldEntry(f followed, yield func(*views.Event, error) bool) bool {
	if f.err != nil {
		if errors.Is(f.err, eventlog.ErrClosed) {
			f.err = bus.Errorf(bus.ReasonUnavailable, "the node is shutting down; resubscribe to the task once it is back")
		}
		yield(nil, f.err)
		return false
	}
	return yield(views.Decode(f.entry), nil)
}
