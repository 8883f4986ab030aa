package eventlog

import "testing"

// reportWrites reports what the log wrote per entry after a benchmark
// appended entries: write-ahead log bytes, and the bytes of the tables a
// flush of everything then makes. They are what storing each value once
// (layout 2) halves, and unlike time they do not depend on the machine's
// load. The flush is not timed.
func reportWrites(b *testing.B, l *Log, entries int) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	if entries == 0 {
		return
	}
	wal := l.db.Metrics().WAL.BytesWritten
	if err := l.db.Flush(); err != nil {
		b.Fatal(err)
	}
	m := l.db.Metrics()
	var flushed uint64
	for i := range m.Levels {
		flushed += m.Levels[i].TableBytesFlushed
	}
	b.ReportMetric(float64(wal)/float64(entries), "WAL-B/entry")
	b.ReportMetric(float64(flushed)/float64(entries), "flushed-B/entry")
}
