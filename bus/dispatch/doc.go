// Package dispatch delivers the signals an agent emits: to a NATS subject,
// to an HTTP webhook, to the logger, nowhere, or to several of these at
// once.
//
// Where a signal goes is a Config, plain data that is stored inside Emit
// directives in the event log and given as the agent option
// "default_dispatch" over JSON. New turns a Config and an Env (the NATS
// connection, the webhook guard, the logger, the clock) into a Dispatcher.
// New does no I/O and is cheap, but a Dispatcher is meant to be built once
// and used many times: every Dispatcher this package returns is immutable
// and safe for concurrent use by any number of goroutines.
//
// # Config in JSON
//
// A Config is written in one of three forms:
//
//	"nats"                                   a short form: "nats", "log" or "noop"
//	{"kind":"webhook","url":"https://…","secret_env":"JIDO_SECRET_HOOK"}  the object form
//	["nats", {"kind":"log","level":"debug"}] a list: every target gets the signal
//
// The object form's fields, by kind (durations are Go duration strings such
// as "500ms" or "1m30s"; a field of another kind is an error):
//
//	nats     subject   a literal NATS subject; empty means <prefix>.emit.<agent-id>.<type>
//	         mode      "binary" (default) or "structured"
//	webhook  url       http or https URL (required), allowed by the node's
//	                   webhook policy (below)
//	         secret_env  the environment variable holding the HMAC-SHA256
//	                   key, read when the dispatcher is built (required);
//	                   its name starts with JIDO_SECRET_
//	         secret    the key itself: refused by the policy, since a
//	                   config is stored in the event log and logged; read
//	                   only so that configs stored before still decode
//	         headers   extra request headers, {"Name":"value"}; not
//	                   Authorization, Cookie, Host, Proxy-* or hop-by-hop
//	         timeout   per attempt, default 10s
//	         max_attempts  default 5
//	         backoff   the first retry delay, default 500ms, doubled each retry
//	         max_backoff   the largest delay, default 30s
//	log      level     "debug", "info" (default), "warn" or "error"
//	noop     —
//
// An object without "kind" is a nats target, as is the zero Config.
// Decoding validates; invalid configs are *bus.Error values of type
// bus.ReasonInvalidRequest whose message names the field, as in
// `dispatch config [1].url: …`.
//
// # Where webhooks may go
//
// A webhook makes the node send requests where its config says, and the
// config is written by whoever may start an agent; so the operator decides
// where webhooks may go, in a WebhookPolicy (the serve flags
// --webhook-allow PATTERN and --webhook-allow-private CIDR), compiled by
// NewWebhookGuard into Env.Webhooks. By default no webhook is allowed.
// New and Admit refuse, with a *bus.Error of type bus.ReasonForbidden:
// a URL that matches no pattern of the policy (the pattern form is in
// WebhookPolicy's doc), that has user info or a host spelt as a number
// other than dotted-decimal IPv4, or whose host is a non-public IP address
// outside AllowPrivate; an inline secret; a secret_env without the
// JIDO_SECRET_ prefix (a signature is an oracle on its key, which must not
// be any variable of the node's environment); a header a caller may not
// choose. A secret_env variable that is not set is bus.ReasonInvalidRequest.
// Errors name variables, never their values.
//
// The name is not the address: every connection a webhook makes is checked
// when it is made, on the resolved address, so a name that resolves to a
// private, loopback or link-local address (the cloud metadata service
// 169.254.169.254 among them) fails the delivery with ErrPrivateAddress
// unless AllowPrivate holds it; such a failure is not retried. The HTTP
// client uses no proxy, whatever HTTP_PROXY says (a proxy would make the
// connection the check cannot see), and follows no redirect.
//
// # What a delivery means
//
// nats: the message was handed to the connection (core NATS publish; no
// acknowledgement from a subscriber). An error means it was not sent.
//
// webhook: the receiver answered 2xx. Network errors, per-attempt timeouts,
// 5xx and 429 are retried with exponential backoff and jitter, never sooner
// than a Retry-After header asks; other statuses are not retried. Redirects
// are not followed. A receiver may see a signal more
// than once (a retry after a lost answer, a directive re-executed after a
// crash): the CloudEvent id is the same each time, so deduplicate on it.
//
// log: a record was handed to the slog.Logger. noop: nothing happened.
//
// list: every target was tried, concurrently; the error joins the failures
// of the targets that failed.
//
// # Webhook requests and their signature
//
// Each attempt is one POST of the signal as a structured CloudEvent (the
// JSON event format) with these headers:
//
//	Content-Type:    application/cloudevents+json
//	Jido-Timestamp:  the attempt's time in Unix seconds, e.g. 1767225600
//	Jido-Signature:  sha256=<hex of HMAC-SHA256(secret, timestamp + "." + body)>
//	Ce-Id, Ce-Type:  the signal's id and type, for routing without parsing
//	                 (percent-encoded as in the CloudEvents HTTP binding)
//
// To verify a request, a receiver takes the raw body bytes (before any JSON
// parsing), computes HMAC-SHA256 with the shared secret over the decimal
// timestamp exactly as sent, one '.', and the body; hex-encodes it in lower
// case; compares it with the part of Jido-Signature after "sha256=" in
// constant time; and refuses timestamps too far from its own clock, which
// bounds replays. VerifySignature does all of this for receivers in Go.
// Each attempt carries a fresh timestamp and signature; the body is the same
// bytes every time.
package dispatch
