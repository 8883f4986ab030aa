package node

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

func (n *Node) clusterAgentsSubject() string { return n.subjects.Name() + ".cluster.agents" }

// serveClusterList answers the other nodes' requests for this node's list.
func (n *Node) serveClusterList() error {
	sub, err := n.conn.nc.Subscribe(n.clusterAgentsSubject(), func(msg *nats.Msg) {
		var opts runtime.ListOptions
		var body []byte
		err := json.Unmarshal(msg.Data, &opts)
		if err == nil {
			body, err = json.Marshal(struct {
				Agents []runtime.Info `json:"agents"`
				Node   string         `json:"node"`
			}{n.rt.ListSome(opts), n.cfg.Cluster.NodeID})
		}
		if err == nil && int64(len(body)) > n.conn.nc.MaxPayload() {
			err = bus.Errorf(bus.ReasonTooLarge, "node %s's part of the list is %d bytes, over the max payload: ask for a smaller limit", n.cfg.Cluster.NodeID, len(body))
		}
		if err != nil {
			body = bus.ErrorReply(err)
		}
		_ = msg.Respond(body)
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", n.clusterAgentsSubject(), err)
	}
	n.clusterListSub = sub
	return nil
}

// clusterList asks every live node for its agents and merges the lists.
func (n *Node) clusterList(ctx context.Context, opts runtime.ListOptions) ([]runtime.Info, error) {
	m := n.member.Load()
	if m == nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "the node is joining its cluster; retry")
	}
	live := map[string]bool{}
	for _, nd := range m.Status().Nodes {
		if nd.Alive {
			live[nd.ID] = true
		}
	}
	req, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	inbox := n.conn.nc.NewRespInbox()
	replies := make(chan *nats.Msg, 64)
	sub, err := n.conn.nc.ChanSubscribe(inbox, replies)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := n.conn.nc.PublishRequest(n.clusterAgentsSubject(), inbox, req); err != nil {
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
