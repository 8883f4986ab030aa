package agentapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
)

// Listing a cluster's agents. Each node holds the agents of its own
// partitions, so the node that answers jido.api.agent.ls asks every node
// (<prefix>.cluster.agents, which every node subscribes to) for its list
// with the request's options and merges the answers. A list some live
// node did not answer for is refused unavailable rather than answered
// short.

// clusterListTimeout bounds the wait for every node's list.
const clusterListTimeout = 5 * time.Second

// ClusterList answers and asks the cluster's agent-list requests for one
// node; its List is Options.List on a cluster's node.
type ClusterList struct {
	Conn     *nats.Conn
	Subjects bus.Subjects
	Runtime  *runtime.Runtime
	// NodeID names this node in its answers.
	NodeID string
	// Live returns the ids of the cluster's live nodes, or an error
	// (unavailable) while the node is still joining.
	Live func() (map[string]bool, error)
}

func (c *ClusterList) subject() string { return c.Subjects.Name() + ".cluster.agents" }

// Serve answers the other nodes' requests for this node's list, until the
// connection drains.
func (c *ClusterList) Serve() error {
	_, err := c.Conn.Subscribe(c.subject(), func(msg *nats.Msg) {
		var opts runtime.ListOptions
		var body []byte
		err := json.Unmarshal(msg.Data, &opts)
		if err == nil {
			body, err = json.Marshal(struct {
				Agents []runtime.Info `json:"agents"`
				Node   string         `json:"node"`
			}{c.Runtime.ListSome(opts), c.NodeID})
		}
		if err == nil && int64(len(body)) > c.Conn.MaxPayload() {
			err = bus.Errorf(bus.ReasonTooLarge, "node %s's part of the list is %d bytes, over the max payload: ask for a smaller limit", c.NodeID, len(body))
		}
		if err != nil {
			body = bus.ErrorReply(err)
		}
		_ = msg.Respond(body)
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", c.subject(), err)
	}
	return nil
}

// List asks every live node for its agents and merges the lists.
func (c *ClusterList) List(ctx context.Context, opts runtime.ListOptions) ([]runtime.Info, error) {
	live, err := c.Live()
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	inbox := c.Conn.NewRespInbox()
	replies := make(chan *nats.Msg, 64)
	sub, err := c.Conn.ChanSubscribe(inbox, replies)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := c.Conn.PublishRequest(c.subject(), inbox, req); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, clusterListTimeout)
	defer cancel()
	var lists [][]runtime.Info
	answered := map[string]bool{}
	for len(answered) < len(live) {
		select {
		case msg := <-replies:
			var r struct {
				OK     *bool          `json:"ok"`
				Error  *bus.Error     `json:"error"`
				Agents []runtime.Info `json:"agents"`
				Node   string         `json:"node"`
			}
			if err := json.Unmarshal(msg.Data, &r); err != nil {
				return nil, fmt.Errorf("a node's list: %w", err)
			}
			if r.OK != nil && !*r.OK {
				return nil, bus.ReplyStatus{Error: r.Error}.Err()
			}
			if !answered[r.Node] {
				answered[r.Node] = true
				lists = append(lists, r.Agents)
			}
		case <-ctx.Done():
			return nil, bus.Errorf(bus.ReasonUnavailable, "%d of the cluster's %d live nodes answered for their agents within %s; retry", len(answered), len(live), clusterListTimeout)
		}
	}
	return runtime.MergeLists(opts, lists...), nil
}
