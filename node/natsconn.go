package node

import (
	"log/slog"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
)

// The node's NATS setup is natsserver's: an embedded server (the default)
// or an existing one.
type (
	NATSConfig = natsserver.Setup
	User       = natsserver.RoleUser
	TLSFiles   = natsserver.TLSFiles
)

// ErrUnprotected is the error of a start that would expose the embedded
// server, or the HTTP listener, on the network without authentication.
var ErrUnprotected = natsserver.ErrUnprotected

// connect connects the node to its NATS, its users given their roles.
func connect(cfg NATSConfig, subjects bus.Subjects, storeDir string, log *slog.Logger, onViolation func(natsserver.Violation)) (*natsserver.Conn, error) {
	perms := func(role, user string) (*natsserver.Permissions, error) { return RolePermissions(role, subjects, user) }
	return natsserver.Connect(cfg, storeDir, log, perms, onViolation)
}
