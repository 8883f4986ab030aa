package jslog

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnsafe: a server or a stream is configured so that JetStream may lose
// or drop an acknowledged entry. The log refuses to run on it.
var ErrUnsafe = errors.New("unsafe JetStream setting")

// SettingError names one unsafe setting, where it is, what it is and why
// it is refused. It wraps ErrUnsafe.
type SettingError struct {
	Where   string // "server s1", "stream JIDO_LOG_3"
	Setting string // the setting's name as nats-server's configuration spells it
	Have    string
	Why     string // what goes wrong with it and what to set instead
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s: %s is %s: %s", e.Where, e.Setting, e.Have, e.Why)
}

func (e *SettingError) Unwrap() error { return ErrUnsafe }

// metadata keys on every partition stream.
const (
	metaPartitions = "jido.partitions"
	metaPartition  = "jido.partition"
)

func (l *Log) partitionStreamName(p int) string {
	return l.upper + "_LOG_" + strconv.Itoa(p)
}

func (l *Log) snapshotStreamName() string { return l.upper + "_SNAPSHOTS" }

// partitionConfig is the configuration Open creates partition p with.
func (l *Log) partitionConfig(p int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              l.partitionStreamName(p),
		Description:       "jido-bus event log, partition " + strconv.Itoa(p) + " of " + strconv.Itoa(l.opts.Partitions),
		Subjects:          []string{l.opts.Prefix + ".log." + strconv.Itoa(p) + ".>"},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      -1,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		MaxMsgsPerSubject: -1,
		MaxMsgSize:        -1,
		Discard:           jetstream.DiscardOld, // irrelevant: no limit is set
		Storage:           jetstream.FileStorage,
		Replicas:          l.opts.Replicas,
		Duplicates:        l.opts.DuplicateWindow,
		// Reads go to the stream leader (a direct get may be answered by a
		// follower that is behind).
		AllowDirect: false,
		// The version of an entry is its place among its subject's
		// messages: deleting one would renumber the stream.
		DenyDelete:         true,
		AllowAtomicPublish: true,
		Metadata: map[string]string{
			metaPartitions: strconv.Itoa(l.opts.Partitions),
			metaPartition:  strconv.Itoa(p),
		},
	}
}

// snapshotConfig is the configuration of the snapshot stream: the last
// message per subject is a stream's snapshot.
func (l *Log) snapshotConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              l.snapshotStreamName(),
		Description:       "jido-bus snapshots, the last per subject",
		Subjects:          []string{l.opts.Prefix + ".snap.>"},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      -1,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		MaxMsgsPerSubject: 1,
		MaxMsgSize:        -1,
		Discard:           jetstream.DiscardOld,
		Storage:           jetstream.FileStorage,
		Replicas:          l.opts.Replicas,
		AllowDirect:       false,
	}
}

// checkDurable refuses what loses acknowledged writes on any stream of the
// log: memory storage, too few replicas, asynchronous persistence.
func (l *Log) checkDurable(c jetstream.StreamConfig) []error {
	where := "stream " + c.Name
	var errs []error
	if c.Storage != jetstream.FileStorage {
		errs = append(errs, &SettingError{where, "storage", c.Storage.String(),
			"a memory stream loses every entry when its servers stop; create it with storage: file"})
	}
	if c.Replicas < 3 && !l.opts.AllowFewerReplicas {
		errs = append(errs, &SettingError{where, "num_replicas", strconv.Itoa(c.Replicas),
			"with fewer than 3 replicas the loss of one server's disk loses acknowledged entries; use 3 (or allow fewer explicitly, for development only)"})
	}
	if c.PersistMode == jetstream.AsyncPersistMode {
		errs = append(errs, &SettingError{where, "persist_mode", "async",
			"the server acknowledges before it writes, so a crash loses acknowledged entries; use persist_mode: default"})
	}
	if c.MaxAge > 0 {
		errs = append(errs, &SettingError{where, "max_age", c.MaxAge.String(),
			"entries older than it are deleted; set max_age to 0 (unlimited)"})
	}
	if c.Retention != jetstream.LimitsPolicy {
		errs = append(errs, &SettingError{where, "retention", c.Retention.String(),
			"interest and work-queue retention delete entries once consumed; use retention: limits"})
	}
	return errs
}

// checkPartition refuses a partition stream that would drop an entry, lose
// the fence's guarantees or was created for another number of partitions.
func (l *Log) checkPartition(p int, c jetstream.StreamConfig) error {
	where := "stream " + c.Name
	errs := l.checkDurable(c)
	if c.Discard == jetstream.DiscardOld {
		for _, lim := range []struct {
			name string
			v    int64
		}{{"max_msgs", c.MaxMsgs}, {"max_bytes", c.MaxBytes}} {
			if lim.v > 0 {
				errs = append(errs, &SettingError{where, lim.name, strconv.FormatInt(lim.v, 10),
					"with discard: old the stream deletes its oldest entries past it; remove the limit (-1)"})
			}
		}
	}
	if c.MaxMsgsPerSubject > 0 && !(c.Discard == jetstream.DiscardNew && c.DiscardNewPerSubject) {
		errs = append(errs, &SettingError{where, "max_msgs_per_subject", strconv.FormatInt(c.MaxMsgsPerSubject, 10),
			"an agent's oldest entries are deleted past it; remove the limit (-1)"})
	}
	if c.Duplicates < l.opts.DuplicateWindow {
		errs = append(errs, &SettingError{where, "duplicate_window", c.Duplicates.String(),
			"a publish retried after it is not recognised by the server; make it at least " + l.opts.DuplicateWindow.String()})
	}
	if !c.AllowAtomicPublish {
		errs = append(errs, &SettingError{where, "allow_atomic", "false",
			"a multi-stream append must be written all or nothing; set allow_atomic: true"})
	}
	if c.AllowMsgTTL {
		errs = append(errs, &SettingError{where, "allow_msg_ttl", "true",
			"a message published with a TTL header would expire out of the log; set allow_msg_ttl: false"})
	}
	if got := c.Metadata[metaPartitions]; got != strconv.Itoa(l.opts.Partitions) {
		if got == "" {
			got = "missing"
		}
		errs = append(errs, &SettingError{where, "metadata " + metaPartitions, got,
			fmt.Sprintf("the log was created with another number of partitions than %d; an agent's partition would change and its history be lost to it: use the number it was created with", l.opts.Partitions)})
	}
	if got := c.Metadata[metaPartition]; got != strconv.Itoa(p) {
		errs = append(errs, &SettingError{where, "metadata " + metaPartition, got,
			fmt.Sprintf("the stream is not partition %d of this log; it was created by something else", p)})
	}
	return errors.Join(errs...)
}

// checkSnapshots refuses a snapshot stream that loses acknowledged writes
// or drops snapshots other than by replacing them.
func (l *Log) checkSnapshots(c jetstream.StreamConfig) error {
	errs := l.checkDurable(c)
	if c.MaxMsgsPerSubject != 1 {
		errs = append(errs, &SettingError{"stream " + c.Name, "max_msgs_per_subject", strconv.FormatInt(c.MaxMsgsPerSubject, 10),
			"the snapshot stream keeps the last snapshot per stream; set it to 1"})
	}
	if c.Discard == jetstream.DiscardOld && (c.MaxMsgs > 0 || c.MaxBytes > 0) {
		errs = append(errs, &SettingError{"stream " + c.Name, "max_msgs/max_bytes", fmt.Sprintf("%d/%d", c.MaxMsgs, c.MaxBytes),
			"with discard: old the stream deletes snapshots still needed; remove the limits (-1)"})
	}
	return errors.Join(errs...)
}

// durationSetting formats a sync interval for a message.
func durationSetting(d time.Duration) string {
	if d == 0 {
		return "the default (2m0s)"
	}
	return d.String()
}
