package jslog

import (
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// Defaults of Options.
const (
	DefaultPrefix          = "jido"
	DefaultPartitions      = 64
	DefaultReplicas        = 3
	DefaultDuplicateWindow = 2 * time.Minute
	DefaultTimeout         = 10 * time.Second
	DefaultCacheStreams    = 100_000
	DefaultMaxAppendEvents = 1_000
)

// Options configure a Log. The zero value is the production layout: prefix
// "jido", 64 partitions, 3 replicas, a two-minute duplicate window.
type Options struct {
	// Prefix is the first subject token ("jido") and, in upper case, the
	// start of the stream names (JIDO_LOG_0 …).
	Prefix string
	// Partitions is P, the number of partition streams. It is fixed when
	// the streams are created: Open refuses another value. Zero means 64.
	Partitions int
	// Replicas of every stream Open creates. Zero means 3. Fewer than 3
	// lose acknowledged writes when one server's disk does, so Open
	// refuses them unless AllowFewerReplicas is set (development only).
	Replicas           int
	AllowFewerReplicas bool
	// DuplicateWindow is the partition streams' duplicate window: a
	// publish retried within it is answered as a duplicate by the server
	// (past it the Log's own index of ids answers). Open refuses existing
	// streams with a shorter one. Zero means two minutes.
	DuplicateWindow time.Duration
	// Timeout bounds each request to JetStream that has no context of its
	// own (reads, loading a stream's index). Zero means 10 s.
	Timeout time.Duration
	// CacheStreams bounds how many streams' indexes (version, message
	// sequences, event ids) the Log keeps in memory; the least recently
	// used beyond it are dropped and read again when next touched. Zero
	// means 100,000.
	CacheStreams int
	// Limits bound every appended event, as in eventlog.Options.
	Limits bus.Limits
	// MaxAppendEvents bounds the events of one Append or AppendMulti
	// call. Zero means 1,000 (one append is one message, and a message is
	// bounded by the servers' max_payload).
	MaxAppendEvents int
}

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Partitions == 0 {
		o.Partitions = DefaultPartitions
	}
	if o.Replicas == 0 {
		o.Replicas = DefaultReplicas
	}
	if o.DuplicateWindow == 0 {
		o.DuplicateWindow = DefaultDuplicateWindow
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.CacheStreams == 0 {
		o.CacheStreams = DefaultCacheStreams
	}
	if o.MaxAppendEvents == 0 {
		o.MaxAppendEvents = DefaultMaxAppendEvents
	}
	return o
}
