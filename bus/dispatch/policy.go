package dispatch

// WebhookPolicy is the operator's rule for where webhooks may go. Agents
// choose their webhook targets in their options, which any caller allowed
// to start an agent writes; the policy is what keeps such a caller from
// making the node POST to an address of the operator's network. The zero
// value allows no destination at all.
type WebhookPolicy struct {
	// Allow lists the destinations a webhook URL must match.
	Allow []string
	// AllowPrivate lists the networks (CIDR) of private, loopback and
	// link-local addresses that a destination may resolve to; any other
	// such address is refused even when the URL matches Allow.
	AllowPrivate []string
}
