package dispatch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Headers of a webhook request, besides Content-Type, Ce-Id and Ce-Type.
const (
	// HeaderTimestamp carries the attempt's time in Unix seconds, in decimal.
	HeaderTimestamp = "Jido-Timestamp"
	// HeaderSignature carries "sha256=" and the lower-case hex of
	// HMAC-SHA256(secret, timestamp + "." + body).
	HeaderSignature = "Jido-Signature"
)

// ContentType is the Content-Type of a webhook request: the CloudEvents
// JSON event format.
const ContentType = "application/cloudevents+json"

// DefaultMaxSkew is the largest difference between a request's timestamp
// and the receiver's clock that VerifySignature accepts when given zero.
const DefaultMaxSkew = 5 * time.Minute

const signaturePrefix = "sha256="

// Errors of VerifySignature, to be told apart with errors.Is.
var (
	// ErrBadSignature: the signature header is malformed or does not match.
	ErrBadSignature = errors.New("webhook signature does not verify")
	// ErrBadTimestamp: the timestamp is malformed or too far from now.
	ErrBadTimestamp = errors.New("webhook timestamp is not acceptable")
)

// Signature returns the value of the Jido-Signature header for a request
// with the given timestamp header and body:
// "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body)).
func Signature(secret, timestamp, body string) string {
	return signaturePrefix + hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret, timestamp, body string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write([]byte(body))
	return m.Sum(nil)
}

// VerifySignature checks a webhook request as a receiver: timestamp and
// header are the values of the Jido-Timestamp and Jido-Signature headers,
// body the raw request body. It returns nil when the signature is the
// HMAC-SHA256 of timestamp + "." + body under secret (compared in constant
// time) and the timestamp is within maxSkew of the local clock, either way.
// maxSkew zero means DefaultMaxSkew; a negative maxSkew skips the time check,
// which lets a captured request be replayed forever.
//
// The error wraps ErrBadSignature or ErrBadTimestamp.
func VerifySignature(secret, timestamp, body, header string, maxSkew time.Duration) error {
	return verifySignatureAt(time.Now(), secret, timestamp, body, header, maxSkew)
}

func verifySignatureAt(now time.Time, secret, timestamp, body, header string, maxSkew time.Duration) error {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not Unix seconds", ErrBadTimestamp, timestamp)
	}
	hexSum, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok {
		return fmt.Errorf("%w: the header does not start with %q", ErrBadSignature, signaturePrefix)
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: want %d bytes of hex after %q", ErrBadSignature, sha256.Size, signaturePrefix)
	}
	if !hmac.Equal(got, mac(secret, timestamp, body)) {
		return fmt.Errorf("%w: it does not match the body and timestamp", ErrBadSignature)
	}
	if maxSkew == 0 {
		maxSkew = DefaultMaxSkew
	}
	if maxSkew > 0 {
		// Compared in seconds, the header's unit, and without subtracting
		// from sec, an arbitrary int64 that could overflow.
		nowSec, limit := now.Unix(), int64(maxSkew/time.Second)
		if sec > nowSec+limit || sec < nowSec-limit {
			return fmt.Errorf("%w: %s is more than %s away from now (%d)", ErrBadTimestamp, timestamp, maxSkew, nowSec)
		}
	}
	return nil
}
