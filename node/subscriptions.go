package node

// Subscriptions lists the subjects the node serves on its bus (the
// control plane's verbs and the signal kinds), so that a reference of
// them can be checked against what a running node answers.
func (n *Node) Subscriptions() []string { return n.bus.Subscriptions() }
