package eventlog

import (
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// layoutDowngrading is the layout key's value while a downgrade to
// layout 1 runs: "from 2 to 1". A layout-1 build refuses it (it is not
// [1]), so it never reads a half-done log; this build reads it as a log
// part-way between the layouts and upgrades it back at Open (upgradeV1
// takes stream entries of either kind), after which the downgrade can be
// asked again.
var layoutDowngrading = []byte{layoutVersion, layoutV1}

// MigrateReport is what MigrateLayout did.
type MigrateReport struct {
	// From and To are the log's key layouts before and after.
	From int `json:"from"`
	To   int `json:"to"`
	// Converted is the number of stream entries rewritten.
	Converted int `json:"converted"`
	// Damaged is the number of stream entries whose value is missing or
	// fails its checks: left as they were, reported damaged by every
	// layout's verify.
	Damaged int `json:"damaged"`
}

// MigrateLayout rewrites the log in dir into key layout to and closes it.
// Layout 2 (this build's) is what Open upgrades to anyway. Layout 1 is
// read by the builds before 2026-11-28, which refuse layout 2: the
// downgrade copies each stream entry's value back under its stream key,
// where layout 1 keeps a second copy. Nothing else differs between the
// layouts. The log must not be open elsewhere (Open's lock says so).
//
// Crash safety is the upgrade's: the layout key is set to
// layoutDowngrading, synced, before the first change, each batch is
// synced, and the layout key is set to 1 last. A kill leaves a log that
// no layout-1 build opens and that this build upgrades back to layout 2
// on its next Open; MigrateLayout run again then does the whole job.
func MigrateLayout(dir string, opts Options, to int) (MigrateReport, error) {
	if to != layoutV1 && to != layoutVersion {
		return MigrateReport{}, fmt.Errorf("key layout %d: this build writes layouts %d (the builds before 2026-11-28) and %d (this one's)", to, layoutV1, layoutVersion)
	}
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	if _, err := fs.Stat(dir); err != nil {
		return MigrateReport{}, fmt.Errorf("migrate the event log: %w", err)
	}
	l, err := Open(dir, opts)
	if err != nil {
		return MigrateReport{}, err
	}
	rep := MigrateReport{From: layoutVersion, To: layoutVersion}
	if l.upgraded != nil {
		rep.From, rep.Converted, rep.Damaged = layoutV1, l.upgraded.converted, l.upgraded.damaged
	}
	if to == layoutV1 {
		// A log in layout 1 was upgraded by Open just now and goes back:
		// it was in layout 1 before, as From says.
		rep.To = layoutV1
		rep.Converted, rep.Damaged, err = l.downgradeToV1()
	}
	return rep, errors.Join(err, l.Close())
}

// downgradeToV1 rewrites every stream index entry into its value, then
// marks the log layout 1. The Log is not to be used afterwards but to
// close it: this build reads layout 1 only to upgrade it.
func (l *Log) downgradeToV1() (converted, damaged int, err error) {
	logger := l.logger().With("dir", l.dir)
	start := time.Now()
	logger.Info("event log: downgrading the key layout from 2 to 1 (each entry's value copied under its stream key, for the builds before 2026-11-28); if it is interrupted, the next start upgrades the log back and the downgrade can be run again")
	if err := l.db.Set(keyLayout, layoutDowngrading, pebble.Sync); err != nil {
		return 0, 0, fmt.Errorf("downgrade the key layout from 2 to 1: mark the log: %w", err)
	}
	next, hi := []byte{kindStream}, []byte{kindStream + 1}
	lastReport := start
	for next != nil {
		if next, err = l.downgradeBatch(next, hi, &converted, &damaged); err != nil {
			return converted, damaged, fmt.Errorf("downgrade the key layout from 2 to 1 (%d entries converted; the next start upgrades the log back): %w", converted, err)
		}
		if time.Since(lastReport) >= 5*time.Second {
			lastReport = time.Now()
			logger.Info("event log: downgrading the key layout", "converted", converted)
		}
	}
	if err := l.db.Set(keyLayout, []byte{layoutV1}, pebble.Sync); err != nil {
		return converted, damaged, fmt.Errorf("downgrade the key layout from 2 to 1: mark the log done: %w", err)
	}
	attrs := []any{"converted", converted, "took", time.Since(start).Round(time.Millisecond)}
	if damaged > 0 {
		logger.Warn("event log: downgraded the key layout to 1; some entries were damaged and are left as they were: run jido-bus log verify", append(attrs, "damaged", damaged)...)
	} else {
		logger.Info("event log: downgraded the key layout to 1", attrs...)
	}
	return converted, damaged, nil
}

// downgradeBatch rewrites up to upgradeBatchEntries stream entries from
// key lo on, in one synced batch, and returns the key to go on from (nil
// when done). An index entry whose value is missing or damaged is left:
// layout 1 has nothing better to put there, and its verify reports the
// position damaged as this build's does.
func (l *Log) downgradeBatch(lo, hi []byte, converted, damaged *int) ([]byte, error) {
	return l.rewriteBatch(lo, hi, func(b *pebble.Batch, key, iv []byte, vals *pebble.Iterator) error {
		gseq, ok := parseIndexValue(iv)
		if !ok {
			*damaged++
			return nil
		}
		v, ok, err := valueAt(vals, gseq)
		if err != nil {
			return err
		}
		if h, cerr := checkValue(v); !ok || cerr != nil || h.gseq != gseq {
			*damaged++
			return nil
		}
		_ = b.Set(key, v, nil) // Set copies key and v
		*converted++
		return nil
	})
}
