package dispatch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

func TestSignatureScheme(t *testing.T) {
	// The documented scheme, computed independently of Signature.
	m := hmac.New(sha256.New, []byte("k"))
	m.Write([]byte(`1767225600.{"id":"1"}`))
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if got := Signature("k", "1767225600", `{"id":"1"}`); got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
}

func TestVerifySignature(t *testing.T) {
	now := time.Unix(1767225600, 0)
	const secret, body = "s3cret", `{"specversion":"1.0","id":"1"}`
	ts := "1767225600"
	good := Signature(secret, ts, body)
	cases := []struct {
		name    string
		ts      string
		body    string
		header  string
		maxSkew time.Duration
		want    error // nil, ErrBadSignature or ErrBadTimestamp
	}{
		{"valid", ts, body, good, time.Minute, nil},
		{"valid at the skew limit", "1767225540", body, Signature(secret, "1767225540", body), time.Minute, nil},
		{"zero skew means the default", "1767225400", body, Signature(secret, "1767225400", body), 0, nil},
		{"too old", "1767225539", body, Signature(secret, "1767225539", body), time.Minute, ErrBadTimestamp},
		{"too far ahead", "1767225661", body, Signature(secret, "1767225661", body), time.Minute, ErrBadTimestamp},
		{"old beyond the default", "1767225000", body, Signature(secret, "1767225000", body), 0, ErrBadTimestamp},
		{"negative skew skips the time check", "1", body, Signature(secret, "1", body), -1, nil},
		{"extreme timestamp", "-9223372036854775808", body, Signature(secret, "-9223372036854775808", body), time.Minute, ErrBadTimestamp},
		{"body changed", ts, body + " ", good, time.Minute, ErrBadSignature},
		{"timestamp changed", "1767225601", body, good, time.Minute, ErrBadSignature},
		{"no prefix", ts, body, good[len("sha256="):], time.Minute, ErrBadSignature},
		{"not hex", ts, body, "sha256=zz", time.Minute, ErrBadSignature},
		{"truncated", ts, body, good[:len(good)-2], time.Minute, ErrBadSignature},
		{"empty header", ts, body, "", time.Minute, ErrBadSignature},
		{"timestamp not a number", "yesterday", body, good, time.Minute, ErrBadTimestamp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := verifySignatureAt(now, secret, tc.ts, tc.body, tc.header, tc.maxSkew)
			if tc.want == nil && err != nil {
				t.Fatalf("err = %v, want nil", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifySignatureUsesTheClock(t *testing.T) {
	ts := "1000000000" // 2001: far outside any skew of today
	err := VerifySignature("k", ts, "b", Signature("k", ts, "b"), time.Hour)
	if !errors.Is(err, ErrBadTimestamp) {
		t.Fatalf("VerifySignature of a 2001 timestamp = %v, want ErrBadTimestamp", err)
	}
}
