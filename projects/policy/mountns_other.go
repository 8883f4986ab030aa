//go:build unix && !linux

package policy

import (
	"errors"
	"syscall"
)

// Outside Linux there are no user namespaces: Protection reports none, so
// Exec never asks the helper for them.

func namespaceAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func plainAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

var errNoNamespaces = errors.New("user namespaces are Linux only")

func protectEntries(*CommandSpec) error { return errNoNamespaces }

func dropCapabilities() error { return errNoNamespaces }

func dieWithParent(int) error { return nil }
