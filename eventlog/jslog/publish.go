package jslog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jido-bus/jido-bus/eventlog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
)

// outcome of one publish attempt.
type outcome int

const (
	failed    outcome = iota // an error; it is unknown whether anything was stored
	published                // stored at the returned sequences
	fenced                   // refused: a subject moved past its fence, nothing stored
	duplicate                // the server already holds a message with this Msg-Id
)

// JetStream error codes read here.
const (
	codeWrongLastSeq         = jetstream.JSErrCodeStreamWrongLastSequence         // 10071
	codeWrongLastSeqConstant = jetstream.JSErrCodeStreamWrongLastSequenceConstant // 10164: another write to the subject in flight
	codeBatchDuplicate       = 10201                                              // atomic publish batch contains duplicate message id
)

// publish writes msgs: one as a plain publish, several as one atomic
// batch. It returns the sequence of each.
func (l *Log) publish(ctx context.Context, msgs []*outMsg) ([]uint64, outcome, error) {
	nm := make([]*nats.Msg, len(msgs))
	for i, m := range msgs {
		var err error
		if nm[i], err = l.message(m); err != nil {
			return nil, failed, err
		}
	}
	if len(nm) == 1 {
		ack, err := l.js.PublishMsg(ctx, nm[0])
		if err != nil {
			if o := classify(err); o != failed {
				return nil, o, err
			}
			return nil, failed, fmt.Errorf("append to %s: %w (%w): retry the same append", msgs[0].st.name, eventlog.ErrOutcomeUnknown, err)
		}
		if ack.Duplicate {
			return nil, duplicate, nil
		}
		return []uint64{ack.Sequence}, published, nil
	}
	return l.publishBatch(ctx, msgs, nm)
}

// message encodes m with its headers: the position it takes, its Msg-Id
// and its fence.
func (l *Log) message(m *outMsg) (*nats.Msg, error) {
	body, err := encodeEvents(m.events)
	if err != nil {
		return nil, fmt.Errorf("append to %s: %w", m.st.name, err)
	}
	nm := nats.NewMsg(m.st.subject)
	nm.Data = body
	last := m.first + uint64(len(m.events)) - 1
	nm.Header.Set(hdrVersion, strconv.FormatUint(last, 10))
	nm.Header.Set(hdrEvents, strconv.Itoa(len(m.events)))
	nm.Header.Set(hdrStream, m.st.name)
	nm.Header.Set(jetstream.MsgIDHeader, msgID(m.st.name, m.refs[0]))
	// Zero asks that the subject hold no message yet.
	nm.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(m.fence, 10))
	if size := int64(len(body)) + headerSize(nm.Header) + int64(len(nm.Subject)); size > l.nc.MaxPayload() {
		return nil, bus.Errorf(bus.ReasonTooLarge, "append to %s: %d events are %d bytes as one message, the servers' max_payload is %d; append fewer at a time",
			m.st.name, len(m.events), size, l.nc.MaxPayload())
	}
	return nm, nil
}

func headerSize(h nats.Header) int64 {
	n := int64(len("NATS/1.0\r\n\r\n"))
	for k, vs := range h {
		for _, v := range vs {
			n += int64(len(k) + len(v) + 4)
		}
	}
	return n
}

// classify reads a refusal's JetStream error code.
func classify(err error) outcome {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case codeWrongLastSeq, codeWrongLastSeqConstant:
			return fenced
		case codeBatchDuplicate:
			return duplicate
		}
	}
	return failed
}

// batchAck is the reply to a batch's commit message.
type batchAck struct {
	Stream   string              `json:"stream"`
	Sequence uint64              `json:"seq"`
	Count    int                 `json:"count"`
	Error    *jetstream.APIError `json:"error"`
}

// publishBatch writes the messages as one JetStream atomic batch (ADR-50),
// which nats.go v1.55 has no API for: every message carries the batch's id
// and its place in it, the last one commits, and only the commit is
// answered. The batch's messages take consecutive sequences.
func (l *Log) publishBatch(ctx context.Context, msgs []*outMsg, nm []*nats.Msg) ([]uint64, outcome, error) {
	id := bus.NewID()
	for i, m := range nm {
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		if i < len(nm)-1 {
			if err := l.nc.PublishMsg(m); err != nil {
				return nil, failed, fmt.Errorf("append to %s: %w; nothing was stored (the batch was not committed)", msgs[i].st.name, err)
			}
		}
	}
	commit := nm[len(nm)-1]
	commit.Header.Set("Nats-Batch-Commit", "1")
	resp, err := l.nc.RequestMsgWithContext(ctx, commit)
	if err != nil {
		return nil, failed, fmt.Errorf("append to %s and %d more: commit of the atomic batch: %w (%w): retry the same append",
			msgs[0].st.name, len(msgs)-1, eventlog.ErrOutcomeUnknown, err)
	}
	var ack batchAck
	if err := json.Unmarshal(resp.Data, &ack); err != nil {
		return nil, failed, fmt.Errorf("append to %s and %d more: the batch's acknowledgement %q: %w", msgs[0].st.name, len(msgs)-1, resp.Data, err)
	}
	if ack.Error != nil {
		if o := classify(ack.Error); o != failed {
			return nil, o, ack.Error
		}
		return nil, failed, fmt.Errorf("append to %s and %d more: the atomic batch was refused: %w", msgs[0].st.name, len(msgs)-1, ack.Error)
	}
	if ack.Count != len(nm) || ack.Sequence < uint64(len(nm)) {
		return nil, failed, fmt.Errorf("append to %s and %d more: the batch's acknowledgement counts %d messages at sequence %d, %d were sent",
			msgs[0].st.name, len(msgs)-1, ack.Count, ack.Sequence, len(nm))
	}
	seqs := make([]uint64, len(nm))
	for i := range seqs {
		seqs[i] = ack.Sequence - uint64(len(nm)-1-i)
	}
	return seqs, published, nil
}
