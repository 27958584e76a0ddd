package audit

import (
	"context"
	"errors"
)

// Tailer reads the records appended to a store since it last read them,
// as `warren audit tail --follow` does every few seconds: a file store
// from where its last reading ended, PostgreSQL from the seq after the
// last record given, so a follower of a large log does not read it whole
// at every look.
type Tailer struct {
	st    Store
	place filePlace // where the file store's reading ended
	seq   int64     // the last record given
}

// NewTailer reads st from its first record.
func NewTailer(st Store) *Tailer { return &Tailer{st: st} }

// Next gives fn the records appended since the last call (every record
// at the first). When the log was begun again since (moved aside for a
// new chain, or cut), reset is called before its records are given from
// the start: what was given before is not its history. A last line still
// being written is left for the next call; a damaged one ends the
// reading where it is, as a scan's does.
func (t *Tailer) Next(ctx context.Context, reset func(), fn func(Record) error) error {
	give := func(r Record) error {
		t.seq = r.Seq
		return fn(r)
	}
	if fs, ok := t.st.(*FileStore); ok {
		at, err := fs.scanFrom(ctx, t.place, nil, give, reset)
		t.place = at
		return tolerated(err)
	}
	last, ok, err := t.st.Last(ctx)
	if err != nil && !errors.As(err, new(*CorruptError)) {
		return err
	}
	if ok && last.Seq < t.seq {
		reset()
		t.seq = 0
	}
	after := t.seq
	if pg, ok := t.st.(*PGStore); ok {
		return tolerated(pg.scanAfter(ctx, after, give))
	}
	// Any other store is read whole, its new records given.
	return tolerated(t.st.Scan(ctx, func(r Record) error {
		if r.Seq <= after {
			return nil
		}
		return give(r)
	}))
}

// tolerated is err unless it is a damaged record: what is readable was
// given, and verify is the command that judges the rest.
func tolerated(err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return nil
	}
	return err
}
