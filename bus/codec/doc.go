// Package codec reads and writes signals as NATS messages following the
// CloudEvents NATS protocol binding, in both of its content modes:
//
//   - binary: every attribute in a "ce-<name>" header, percent-encoded where
//     the binding asks (space, '"', '%', control and non-ASCII bytes), and
//     the data as the body. Writers set "ce-datacontenttype" and
//     "content-type" both; readers accept either, and match header names
//     without regard to case ("Ce-Id" and "ce-id" are the same header), so
//     an attribute sent twice — in two cases, or as two values — is
//     refused rather than read one way or the other by map order.
//   - structured: "content-type: application/cloudevents+json" and the whole
//     event as the JSON body.
//
// A message with no "ce-" header that is not structured (a plain
// `nats pub SUBJECT '{"by":2}'`) is read leniently: the type comes from the
// subject, the id is a new ULID, the source names the subject and the time
// is now.
//
// Every attribute must be a CloudEvents string once percent-decoded (valid
// UTF-8, no control characters) and the attributes must fit
// bus.Limits.InputAttributeBytes, derived from the log's own limit, so that
// nothing the decoder accepts fails later in the log.
//
// Decode returns *bus.Error values whose Type is the Reason a dead letter is
// filed under; it never panics on any input (it is fuzzed).
package codec
