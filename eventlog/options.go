package eventlog

import (
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
)

// Options configure a Log. The zero value is a durable log on the
// operating system's filesystem with the default limits.
type Options struct {
	// FS is the filesystem holding the data directory. Nil means the
	// operating system's (vfs.Default). Tests pass vfs.NewMem() or
	// vfs.NewCrashableMem().
	FS vfs.FS

	// NoSync makes Append return before its batch is synced to disk, so an
	// acknowledged entry may be lost on a crash. It is for tests and
	// benchmarks only; never set it for data anyone cares about.
	NoSync bool

	// Limits bound every appended event (bus.ValidateSignal). The zero
	// value applies bus.DefaultMaxDataBytes (1 MiB of data).
	Limits bus.Limits

	// MaxAttributeBytes bounds the encoded size of an event without its
	// data (id, source, type, subject, extensions …), in bytes. Zero means
	// 64 KiB.
	MaxAttributeBytes int

	// MaxAppendEvents bounds the number of events in one Append or
	// AppendMulti call. Zero means 10,000.
	MaxAppendEvents int

	// CacheBytes is the size of Pebble's block cache, in bytes. Zero means
	// 64 MiB.
	CacheBytes int64

	// Logger receives Pebble's messages (informational ones at debug
	// level). Nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) maxAttributeBytes() int {
	if o.MaxAttributeBytes == 0 {
		return 64 << 10
	}
	return o.MaxAttributeBytes
}

func (o Options) maxAppendEvents() int {
	if o.MaxAppendEvents == 0 {
		return 10_000
	}
	return o.MaxAppendEvents
}

func (o Options) cacheBytes() int64 {
	if o.CacheBytes == 0 {
		return 64 << 20
	}
	return o.CacheBytes
}
