package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Store keeps the audit chain. Implementations serialise Append across
// processes, so several warren instances (or operators) extend one chain.
type Store interface {
	// Append links rec after the last record and stores it durably. It
	// assigns Seq, PrevHash and Hash, and Time when rec.Time is zero, and
	// returns the record as stored.
	Append(ctx context.Context, rec Record) (Record, error)
	// AppendAll links recs, in order, after the last record and stores
	// them durably at once (one sync for all): a group commit. Either
	// every record is stored or none is.
	AppendAll(ctx context.Context, recs []Record) ([]Record, error)
	// Last returns the newest record; ok is false when the store is empty.
	Last(ctx context.Context) (rec Record, ok bool, err error)
	// Scan calls fn for every record in seq order and stops at fn's first
	// error. A stored entry that cannot be decoded ends the scan with a
	// *CorruptError.
	Scan(ctx context.Context, fn func(Record) error) error
	// Check proves that Append would succeed right now without adding a
	// record, so an action can be refused before any message moves.
	Check(ctx context.Context) error
	// Describe names the store for messages, without secrets.
	Describe() string
	Close() error
}

// CorruptError reports a stored entry that is not a decodable record.
type CorruptError struct {
	Line    int   // 1-based line of a file store; 0 when unknown
	Seq     int64 // seq column of a table store; 0 when unknown
	Partial bool  // the file ends inside this line: a write cut short, or an edit
	Err     error
}

func (e *CorruptError) Error() string {
	where := "last record"
	switch {
	case e.Line > 0:
		where = fmt.Sprintf("line %d", e.Line)
	case e.Seq > 0:
		where = fmt.Sprintf("row seq %d", e.Seq)
	}
	if e.Partial {
		return where + ": partial record without its newline (a write cut short by a crash, or an edit)"
	}
	return fmt.Sprintf("%s: unreadable record: %v", where, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Open returns the store a config names: "file" (the default path, also
// for ""), "file:PATH", "postgres" or "postgres:TABLE". dsn is used only by
// the PostgreSQL store and never appears in errors. Opening touches
// nothing; Check, Append, Last and Scan do the I/O.
func Open(spec, dsn string) (Store, error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	switch kind {
	case "", "file":
		path := arg
		if !hasArg {
			p, err := DefaultFilePath()
			if err != nil {
				return nil, err
			}
			path = p
		}
		return OpenFile(path)
	case "postgres":
		table := DefaultTable
		if hasArg {
			table = arg
		}
		return OpenPostgres(dsn, table)
	}
	return nil, fmt.Errorf("audit: unknown store %q: want file, file:PATH, postgres or postgres:TABLE", spec)
}

// DefaultFilePath is $XDG_STATE_HOME/warren/audit.jsonl, or
// ~/.local/state/warren/audit.jsonl when XDG_STATE_HOME is unset. A
// relative XDG_STATE_HOME is ignored, as the XDG specification asks.
func DefaultFilePath() (string, error) {
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "warren", "audit.jsonl"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("audit: no default file path: %w (set XDG_STATE_HOME or audit = \"file:PATH\")", err)
	}
	return filepath.Join(home, ".local", "state", "warren", "audit.jsonl"), nil
}

// errStop ends a Scan early without being an error for the caller.
var errStop = errors.New("stop")

// ScanWhere reads the records of st that may hold one of needles: bytes
// as a stored line holds them (`"final"`, a sha256 in hex), never
// escaped. A store that can (the file, PostgreSQL) skips the other
// records without decoding them; any other reads them all, so fn must
// still pick what it wants. A record skipped is not checked either:
// Verify reads every one. A reader looking for a few records of a large
// log (an interrupted import of one file) reads it at the speed of a
// search, not of a decode.
func ScanWhere(ctx context.Context, st Store, needles [][]byte, fn func(Record) error) error {
	if w, ok := st.(interface {
		ScanWhere(context.Context, [][]byte, func(Record) error) error
	}); ok {
		return w.ScanWhere(ctx, needles, fn)
	}
	return st.Scan(ctx, fn)
}

// holdsOne reports whether line holds one of needles.
func holdsOne(line []byte, needles [][]byte) bool {
	for _, n := range needles {
		if bytes.Contains(line, n) {
			return true
		}
	}
	return false
}
