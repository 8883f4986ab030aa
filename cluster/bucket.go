package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/eventlog/jslog"
	"github.com/jido-bus/jido-bus/internal/jsplace"
)

// ErrConfigMismatch: the cluster was created with another number of
// partitions than this node was started with.
var ErrConfigMismatch = errors.New("cluster configuration mismatch")

// ensureBucket creates the bucket or checks the one there: file storage,
// no expiry of keys, enough replicas.
func ensureBucket(ctx context.Context, js jetstream.JetStream, o Options) (jetstream.KeyValue, error) {
	name := bucketName(o.Prefix)
	var kv jetstream.KeyValue
	err := jsplace.Retry(ctx, o.Replicas, func() (err error) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      name,
			Description: "jido-bus cluster: nodes' heartbeats and partitions' owners",
			History:     1,
			Storage:     jetstream.FileStorage,
			Replicas:    o.Replicas,
		})
		return err
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		// Another node created it, with settings other than these.
		kv, err = js.KeyValue(ctx, name)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster bucket %s: %w", name, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster bucket %s: %w", name, err)
	}
	if err := checkBucket(st.Config(), o); err != nil {
		return nil, err
	}
	return kv, nil
}

// checkBucket refuses a bucket that may lose or expire ownership records.
func checkBucket(c jetstream.KeyValueConfig, o Options) error {
	where := "bucket " + c.Bucket
	var errs []error
	if c.Storage != jetstream.FileStorage {
		errs = append(errs, &jslog.SettingError{Where: where, Setting: "storage", Have: c.Storage.String(),
			Why: "a memory bucket forgets every owner and epoch when its servers stop; delete it (nats kv del " + c.Bucket + ") and let a node create it"})
	}
	if c.Replicas < 3 && !o.AllowFewerReplicas {
		errs = append(errs, &jslog.SettingError{Where: where, Setting: "num_replicas", Have: strconv.Itoa(c.Replicas),
			Why: "with fewer than 3 replicas the loss of one server stops every node's lease; use 3 (or allow fewer explicitly, for development only)"})
	}
	if c.TTL > 0 {
		errs = append(errs, &jslog.SettingError{Where: where, Setting: "ttl", Have: c.TTL.String(),
			Why: "records would expire and a partition's epoch start again at 1; the bucket must keep its keys: recreate it without a TTL"})
	}
	return errors.Join(errs...)
}

// ensureConfig writes the cluster's configuration, or checks that this
// node agrees with the one written.
func ensureConfig(ctx context.Context, kv jetstream.KeyValue, o Options) error {
	want := configRecord{Partitions: o.Partitions, Replicas: o.Replicas}
	data, err := json.Marshal(want)
	if err != nil {
		return err
	}
	_, err = kv.Create(ctx, configKey, data)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("cluster bucket %s: write %s: %w", kv.Bucket(), configKey, err)
	}
	have, err := readConfig(ctx, kv)
	if err != nil {
		return err
	}
	if have.Partitions != o.Partitions {
		return fmt.Errorf("%w: the cluster (bucket %s) has %d partitions and this node was started with %d; start it with --partitions %d (the number cannot change: every agent's partition would)",
			ErrConfigMismatch, kv.Bucket(), have.Partitions, o.Partitions, have.Partitions)
	}
	return nil
}

func readConfig(ctx context.Context, kv jetstream.KeyValue) (configRecord, error) {
	var c configRecord
	e, err := kv.Get(ctx, configKey)
	// A read may be answered by a replica that has not yet stored the
	// record another node has just created: ask again for a moment.
	for try := 0; errors.Is(err, jetstream.ErrKeyNotFound) && try < 40; try++ {
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		e, err = kv.Get(ctx, configKey)
	}
	if err != nil {
		return c, fmt.Errorf("cluster bucket %s: read %s: %w", kv.Bucket(), configKey, err)
	}
	if err := json.Unmarshal(e.Value(), &c); err != nil || c.Partitions <= 0 {
		return c, fmt.Errorf("cluster bucket %s: %s holds %q, not a cluster configuration; was the bucket made by something else?", kv.Bucket(), configKey, e.Value())
	}
	return c, nil
}
