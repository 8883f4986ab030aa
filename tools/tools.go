//go:build tools

// Package tools pins the versions of the command-line tools the tests and the
// Makefile build (the NATS CLI, staticcheck). `go install pkg@latest` does not
// work on machines that only reach a Go module proxy with exact versions, so
// `make tools` builds them from this module instead.
package tools

import (
	_ "github.com/nats-io/natscli/nats"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
