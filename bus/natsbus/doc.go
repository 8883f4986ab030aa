// Package natsbus connects jido-bus to NATS: it subscribes to the signal
// subjects, decodes what arrives with bus/codec, refuses bad input with a
// dead letter and an error reply, serves the JSON control plane
// (<prefix>.api.…) and publishes signals.
//
// # Input handling
//
// For every message on a signal subject (<prefix>.agent.> or
// <prefix>.signal.>) the Bus, in order:
//
//  1. parses the subject (an invalid agent id or type is refused);
//  2. decodes the CloudEvent in whichever content mode it came
//     (codec.Decoder), checking the type against the subject;
//  3. hands a *Delivery to the Handler, wrapped in the middleware given
//     to HandleSignals (the first middleware is the outermost).
//
// A refusal at any step — or a Delivery.Reject by the handler — publishes
// the original message on <prefix>.dlq.<reason> and, when the message has
// a reply subject, answers {"ok":false,"error":{…}} at once. Nothing is
// dropped without a dead letter.
package natsbus
