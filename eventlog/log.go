package eventlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Log is the event log in one data directory. Open it with Open and close
// it with Close. All methods are safe for concurrent use.
type Log struct {
	dir       string
	db        *pebble.DB
	lock      *pebble.Lock     // the data directory's, held from before Pebble opened
	walLoss   *WALCorruptError // damage accepted at Open (Options.AcceptWALLoss)
	opts      Options
	writeOpts *pebble.WriteOptions

	// commitMu is the sequencer: it is held while sequences are assigned
	// and the batch is handed to Pebble, and by retention and snapshot
	// writes, which must not interleave with an append to the same stream.
	commitMu sync.Mutex
	// upgraded is what Open's upgrade from layout 1 did; nil when the
	// log was in this build's layout already.
	upgraded *upgradeReport

	lastGSeq uint64 // the last global sequence handed out; under commitMu
	// handedOut mirrors lastGSeq for readers, which must not take
	// commitMu: a stream index entry naming a global sequence above it is
	// damaged, not an append in flight.
	handedOut atomic.Uint64
	group     groupState // the sequencer's scratch; under commitMu
	// syncing is closed when the last group handed to Pebble has been
	// synced (or failed); nil before the first. Under commitMu.
	syncing chan struct{}

	// filter holds every idempotency key in the database (and maybe some
	// that were removed), so that most new events need no lookup; nil
	// until it is first built. building, when not nil, is a larger filter
	// being built that will replace it. Both under commitMu; see
	// idemfilter.go. idemSeed seeds their hashes.
	filter   *idemFilter
	building *idemFilter
	// filterStarted is set when the first filter build has begun: on the
	// first append, not at Open, so that a Log opened only to be read (a
	// CLI command, a rebuild) never scans the idempotency keys. Under
	// commitMu.
	filterStarted bool
	idemSeed      maphash.Seed
	bg            sync.WaitGroup // filter builders; Close waits for them

	// queueMu guards queue, the append requests waiting for a leader, and
	// leading, whether some caller is the leader (see commit).
	queueMu sync.Mutex
	queue   []*appendRequest
	leading bool

	// stateMu guards streams. Writers also hold commitMu, so code holding
	// commitMu may read streams without stateMu.
	stateMu sync.RWMutex
	streams map[string]streamMeta

	// durMu guards the durable watermark and the channel that announces
	// its advance (closed and replaced each time, as litestream's Notify).
	durMu   sync.Mutex
	durable uint64
	notify  chan struct{}
	// failed is set once a write could not be made durable (see
	// failed.go), and failedCh closed then.
	failed   *FailedError
	failedCh chan struct{}

	// lifeMu guards closed; ops counts the calls in flight so that Close
	// waits for them before closing Pebble.
	lifeMu sync.Mutex
	closed bool
	ops    sync.WaitGroup
	done   chan struct{} // closed by Close, wakes waiting subscribers

	// damageMu guards damagedFiles, the Pebble files reported damaged
	// (see tabledamage.go).
	damageMu     sync.Mutex
	damagedFiles map[string]bool
}

// Open opens (creating if needed) the log in dir. A directory held by
// another process fails with an error wrapping ErrLocked; one written with
// an unknown layout fails without being changed.
func Open(dir string, opts Options) (*Log, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	cache := pebble.NewCache(opts.cacheBytes())
	defer cache.Unref()
	// The Log does not exist yet when Pebble may first report damage (a
	// table read while opening); the event handler reaches it through l.
	var l *Log
	var pending []pebble.DataCorruptionInfo
	var pendingMu sync.Mutex
	po := &pebble.Options{
		FS:     opts.FS,
		Cache:  cache,
		Logger: pebbleLogger{logger},
		EventListener: &pebble.EventListener{
			DataCorruption: func(info pebble.DataCorruptionInfo) {
				pendingMu.Lock()
				target := l
				if target == nil {
					pending = append(pending, info)
				}
				pendingMu.Unlock()
				if target != nil {
					target.noteDamagedFile(info)
				} else {
					logger.Error("event log: a file is damaged", "path", info.Path, "err", fmt.Sprint(info.Details))
				}
			},
		},

		MemTableSize: opts.memTableBytes(),
		// Sync offsets in the WAL let a replay tell a torn tail from damage
		// followed by records that were synced after it.
		FormatMajorVersion: pebble.FormatWALSyncChunks,
	}
	if po.FS == nil {
		po.FS = vfs.Default
	}
	db, lock, loss, err := openPebble(dir, po, opts)
	if err != nil {
		if isLockError(err) {
			return nil, fmt.Errorf("open event log %s: %w (%v)", dir, ErrLocked, err)
		}
		return nil, fmt.Errorf("open event log %s: %w", dir, err)
	}
	created := &Log{
		dir:       dir,
		db:        db,
		lock:      lock,
		walLoss:   loss,
		opts:      opts,
		writeOpts: pebble.Sync,
		streams:   make(map[string]streamMeta),
		notify:    make(chan struct{}),
		failedCh:  make(chan struct{}),
		done:      make(chan struct{}),
		idemSeed:  maphash.MakeSeed(),
	}
	pendingMu.Lock()
	l = created
	for _, info := range pending { // logged when reported
		if l.damagedFiles == nil {
			l.damagedFiles = make(map[string]bool)
		}
		l.damagedFiles[info.Path] = true
	}
	pending = nil
	pendingMu.Unlock()
	if opts.NoSync {
		l.writeOpts = pebble.NoSync
	}
	if err := l.load(); err != nil {
		_ = l.closeDB()
		return nil, fmt.Errorf("open event log %s: %w", dir, err)
	}
	if loss != nil {
		logger.Error("event log opened without the entries after damage in its write-ahead log",
			"dir", dir, "wal", loss.Path, "offset", loss.Offset, "dropped_bytes", loss.DroppedBytes, "saved_to", loss.SavedTo, "reason", loss.Reason)
	}
	return l, nil
}

func (l *Log) logger() *slog.Logger {
	if l.opts.Logger != nil {
		return l.opts.Logger
	}
	return slog.Default()
}

// isLockError recognises Pebble's failure to take the directory lock:
// fcntl reports EAGAIN or EACCES when another process holds it.
func isLockError(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		strings.Contains(err.Error(), "lock held by current process")
}

// load checks the layout version, reads the stream metadata and the last
// global sequence into memory, and upgrades a log in layout 1 (see
// upgrade.go).
func (l *Log) load() error {
	layout, downgrading, err := l.layout()
	if err != nil {
		return err
	}
	if v, closer, err := l.db.Get(keyLastGSeq); err == nil {
		if len(v) == 8 {
			l.lastGSeq = binary.BigEndian.Uint64(v)
		}
		_ = closer.Close()
		if l.lastGSeq == 0 {
			return fmt.Errorf("last global sequence: %w", &CorruptError{Reason: "value is not 8 bytes"})
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	l.durable = l.lastGSeq
	l.handedOut.Store(l.lastGSeq)
	lo, hi := metaBounds()
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	total := uint64(0)
	for it.First(); it.Valid(); it.Next() {
		stream := string(it.Key()[1:])
		m, err := decodeMeta(it.Value())
		if err != nil {
			return fmt.Errorf("metadata of %s: %w", stream, &CorruptError{Stream: stream, Reason: err.Error()})
		}
		l.streams[stream] = m
		total += m.count
	}
	if err := it.Error(); err != nil {
		return err
	}
	if layout != layoutVersion {
		if downgrading {
			l.logger().Warn("event log: a downgrade to key layout 1 (jido-bus log migrate) was interrupted: the log goes back to layout 2 first; run the downgrade again to go back", "dir", l.dir)
		}
		rep, err := l.upgradeV1(total)
		l.upgraded = &rep
		return err
	}
	return nil
}

// layout returns the key layout of the log: layoutVersion for a new one
// (which it marks so), layoutV1 for one in layout 1 or half-way through
// its upgrade or a downgrade (downgrading says which). A log written by a
// newer build is refused, unchanged.
func (l *Log) layout() (layout byte, downgrading bool, err error) {
	v, closer, err := l.db.Get(keyLayout)
	if errors.Is(err, pebble.ErrNotFound) {
		if err := l.db.Set(keyLayout, []byte{layoutVersion}, pebble.Sync); err != nil {
			return 0, false, err
		}
		return layoutVersion, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	got := append([]byte(nil), v...)
	_ = closer.Close()
	switch {
	case len(got) == 1 && (got[0] == layoutVersion || got[0] == layoutV1):
		return got[0], false, nil
	case string(got) == string(layoutUpgrading), string(got) == string(layoutDowngrading):
		// Half-way either way: the upgrade takes stream entries of both
		// kinds and finishes the log in this build's layout.
		return layoutV1, string(got) == string(layoutDowngrading), nil
	case len(got) == 1 && got[0] > layoutVersion:
		return 0, false, fmt.Errorf("the log is in key layout %d, written by a newer jido-bus; this build reads layouts %d to %d: run the newer build (its log format is printed by jido-bus version)", got[0], layoutV1, layoutVersion)
	default:
		return 0, false, fmt.Errorf("unknown key layout %v (this build reads layouts %d to %d)", got, layoutV1, layoutVersion)
	}
}

// Close waits for the calls in flight, then closes the database. Running
// subscriptions return ErrClosed from Next. Close is idempotent.
func (l *Log) Close() error {
	l.lifeMu.Lock()
	if l.closed {
		l.lifeMu.Unlock()
		return nil
	}
	l.closed = true
	close(l.done)
	l.lifeMu.Unlock()
	l.ops.Wait()
	l.bg.Wait()
	return l.closeDB()
}

// closeDB closes Pebble, then releases the directory's lock Open took.
func (l *Log) closeDB() error {
	err := l.db.Close()
	return errors.Join(err, l.lock.Close())
}

// enter registers a call in flight; it fails once Close has begun.
func (l *Log) enter() error {
	l.lifeMu.Lock()
	defer l.lifeMu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.ops.Add(1)
	return nil
}

func (l *Log) leave() { l.ops.Done() }

// Durable returns the highest global sequence known to be synced to disk:
// every entry at or below it is readable and survives a crash.
func (l *Log) Durable() uint64 {
	l.durMu.Lock()
	defer l.durMu.Unlock()
	return l.durable
}

// Notify returns a channel that is closed when the durable watermark next
// advances (or the Log closes). Take the channel before reading, then wait
// on it, and no commit is missed.
func (l *Log) Notify() <-chan struct{} {
	l.durMu.Lock()
	defer l.durMu.Unlock()
	return l.notify
}

// advanceDurable raises the durable watermark to gseq. Pebble syncs its
// WAL in commit order, and commit order is sequence order, so a synced
// batch implies every earlier one is synced.
func (l *Log) advanceDurable(gseq uint64) {
	l.durMu.Lock()
	defer l.durMu.Unlock()
	if gseq > l.durable {
		l.durable = gseq
		close(l.notify)
		l.notify = make(chan struct{})
	}
}
