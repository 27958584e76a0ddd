package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Torn tails. A warren killed while it appends (SIGKILL, a power cut) can
// leave the file ending inside a line: the kernel stops a write to a file
// between two pages when the writer gets a fatal signal. Nothing was done
// on the strength of that line (a record is acted on only once its fsync
// returned), so the next append sets it aside rather than stop every
// operation until someone moves the file.
//
// It does so only when warren's own journal proves the fragment is what
// warren was writing. Before every append the store writes PATH.writing:
// the file it appends to, the offset and the seq it appends after, and
// the exact bytes it is about to write, synced before the first of them
// reaches the log; the journal is emptied once the append is durable. A
// torn tail is repaired only when that journal exists, the log's bytes
// from its offset on are a prefix of the journal's bytes, and a whole
// record with the journal's seq ends the log at that offset. Anything
// else (no journal, a fragment that is not that prefix, one after a line
// that is not a whole record) is damage the store cannot explain: every
// append and Check refuses with a *TornError, and nothing is rewritten.
// Only an append repairs; Check, Last and Scan change nothing.
//
// The repair copies the fragment to PATH.torn-TIME, cuts the file back to
// its last whole line, and writes an "audit" record
// ("torn_record_set_aside") naming the copy, the fragment's size and its
// sha256, chained before the append's own records. A fragment that is the
// whole record warren wrote, lacking only its newline, is kept and the
// newline added.

// TornAction and TornOutcome mark the record that sets a torn tail aside.
const (
	TornAction  = "audit"
	TornOutcome = "torn_record_set_aside"
)

// journalSuffix names the write-ahead journal beside the log.
const journalSuffix = ".writing"

// TornError refuses to append after a torn tail that no interrupted write
// of warren's explains.
type TornError struct {
	Path  string
	Bytes int    // the size of the fragment after the last whole line
	Why   string // why the fragment is not taken for warren's own
}

func (e *TornError) Error() string {
	return fmt.Sprintf("audit: %s ends with %d bytes that are not a whole record, %s: warren appends nothing more to it; `warren audit verify` shows the damage",
		e.Path, e.Bytes, e.Why)
}

func isTorn(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce) && ce.Partial
}

// journal is what PATH.writing holds: data is being appended at offset
// of the file dev/ino, after the record with seq after (0: none). An
// append that repairs a torn tail also names the fragment it replaces
// (its size and sha256), so a repair cut short can be taken up again.
type journal struct {
	dev, ino     uint64
	offset       int64
	after        int64
	data         []byte
	replaces     int64
	replacesHash string
}

const journalMagic = "warren audit journal v1"

func (j journal) encode() []byte {
	replaces := "-"
	if j.replaces > 0 {
		replaces = j.replacesHash
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nfile %d %d\noffset %d\nafter %d\nreplaces %d %s\nsize %d\nsha256 %s\n\n",
		journalMagic, j.dev, j.ino, j.offset, j.after, j.replaces, replaces, len(j.data), digestHex(j.data))
	b.Write(j.data)
	return b.Bytes()
}

// decodeJournal reads a journal; one cut short or altered is an error.
func decodeJournal(raw []byte) (journal, error) {
	head, data, ok := bytes.Cut(raw, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	if !ok || len(lines) != 7 || lines[0] != journalMagic {
		return journal{}, errors.New("not a journal of warren's, or cut short")
	}
	var j journal
	var size int64
	var sum string
	fields := []struct {
		key  string
		into []any
	}{
		{"file", []any{&j.dev, &j.ino}},
		{"offset", []any{&j.offset}},
		{"after", []any{&j.after}},
		{"replaces", []any{&j.replaces, &j.replacesHash}},
		{"size", []any{&size}},
		{"sha256", []any{&sum}},
	}
	for i, f := range fields {
		words := strings.Fields(lines[i+1])
		if len(words) != len(f.into)+1 || words[0] != f.key {
			return journal{}, fmt.Errorf("line %d: want %s", i+2, f.key)
		}
		for k, into := range f.into {
			var err error
			switch v := into.(type) {
			case *uint64:
				*v, err = strconv.ParseUint(words[k+1], 10, 64)
			case *int64:
				*v, err = strconv.ParseInt(words[k+1], 10, 64)
			case *string:
				*v = words[k+1]
			}
			if err != nil {
				return journal{}, fmt.Errorf("line %d: %w", i+2, err)
			}
		}
	}
	if size != int64(len(data)) || sum != digestHex(data) {
		return journal{}, fmt.Errorf("it holds %d bytes, not the %d its header names with their sha256", len(data), size)
	}
	j.data = data
	return j, nil
}

func (s *FileStore) journalPath() string { return s.path + journalSuffix }

// writeJournal makes j the journal of f, synced before any of j.data is
// written. A journal already there describes bytes the log holds whole
// (the last append's, if its removal was lost) and is overwritten in
// place. A repair replaces the journal that proves its fragment: through
// a new file renamed over it, so that no crash leaves neither. The
// directory is synced only then: a new journal lost with its directory
// entry in a power cut turns a repair into a refusal, never the reverse.
func (s *FileStore) writeJournal(f *os.File, j journal, replace bool) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return s.wrap("stat", err)
	}
	j.dev, j.ino = uint64(st.Dev), st.Ino
	path := s.journalPath()
	name := path
	if replace {
		name = path + ".new"
	}
	w, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		_, err = w.Write(j.encode())
		if err == nil {
			err = w.Sync()
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil && replace {
		if err = os.Rename(name, path); err == nil {
			err = SyncDir(filepath.Dir(path))
		}
	}
	if err != nil {
		if replace {
			_ = os.Remove(name)
		}
		return fmt.Errorf("audit: writing the journal %s before appending to %s: %w", path, s.path, err)
	}
	return nil
}

// dropJournal empties the journal once the append it describes is
// durable: an empty journal names no write under way. Emptying, not
// removing, spares every append the creation of a file. An emptying lost
// to a crash leaves a journal of bytes the log holds whole, which no
// repair acts on.
func (s *FileStore) dropJournal() { _ = os.Truncate(s.journalPath(), 0) }

// readJournal reads the journal; nil when there is none or it is empty.
func (s *FileStore) readJournal() (*journal, error) {
	f, err := os.OpenFile(s.journalPath(), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(f); err != nil || raw.Len() == 0 {
		return nil, err
	}
	j, err := decodeJournal(raw.Bytes())
	if err != nil {
		return nil, err
	}
	return &j, nil
}

// tornRepair is a torn tail the journal proves warren's own.
type tornRepair struct {
	cut  int64   // just after the last whole line
	frag []byte  // the bytes from cut to the end of the file
	prev *Record // the last whole record before cut; nil for none
	// whole is the fragment read as the record warren wrote, when it
	// lacks only its newline.
	whole *Record
	aside string // where lead names the fragment's copy
}

// provenTorn judges the torn tail of f, held locked and ending at end,
// without changing anything: the repair when warren's journal proves the
// fragment its own, else a *TornError.
func (s *FileStore) provenTorn(f *os.File, end int64) (*tornRepair, error) {
	cut, err := lastNewline(f, end)
	if err != nil {
		return nil, err
	}
	fix := &tornRepair{cut: cut, frag: make([]byte, end-cut)}
	if _, err := f.ReadAt(fix.frag, cut); err != nil {
		return nil, err
	}
	refuse := func(format string, args ...any) error {
		return &TornError{Path: s.path, Bytes: len(fix.frag), Why: fmt.Sprintf(format, args...)}
	}
	var ce *CorruptError
	if fix.prev, err = lastRecord(f, cut); errors.As(err, &ce) {
		return nil, refuse("after a line that is not a whole record either")
	} else if err != nil {
		return nil, err
	}
	j, err := s.readJournal()
	switch {
	case err != nil:
		return nil, refuse("and no write of warren's can be shown to have left them (%s: %v)", s.journalPath(), err)
	case j == nil:
		return nil, refuse("and no write of warren's left them (%s names none)", s.journalPath())
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	notWarrens := refuse("and they are not what warren was writing there (%s)", s.journalPath())
	if j.dev != uint64(st.Dev) || j.ino != st.Ino || j.offset > cut {
		return nil, notWarrens
	}
	held := make([]byte, end-j.offset)
	if _, err := f.ReadAt(held, j.offset); err != nil {
		return nil, err
	}
	switch {
	case len(held) < len(j.data) && bytes.Equal(held, j.data[:len(held)]):
	case j.replaces == int64(len(held)) && j.replacesHash == digestHex(held):
		// A repair cut short before it cut the fragment off: the
		// journal it wrote first names that fragment.
	default:
		return nil, notWarrens
	}
	before, err := lastRecord(f, j.offset)
	if err != nil || before == nil && j.after != 0 || before != nil && before.Seq != j.after {
		return nil, notWarrens
	}
	if n := end - j.offset; n < int64(len(j.data)) && j.data[n] == '\n' && j.replaces == 0 {
		rec, err := parseLine(fix.frag)
		if err != nil {
			return nil, notWarrens
		}
		fix.whole = &rec
	}
	return fix, nil
}

// crashTailer is a store that can tell a torn tail of its own making.
type crashTailer interface {
	crashTail(ctx context.Context) bool
}

// crashTail says, changing nothing, whether the file ends in a fragment
// the next append would repair.
func (s *FileStore) crashTail(ctx context.Context) bool {
	f, err := s.open(os.O_RDONLY)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := lockFile(ctx, f, syscall.LOCK_SH); err != nil {
		return false
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return false
	}
	if _, err := lastRecord(f, end); !isTorn(err) {
		return false
	}
	fix, err := s.provenTorn(f, end)
	return err == nil && fix != nil
}

func digestHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// lead is what an append writes before its own records to repair the
// tail, and the record those records follow: a newline after a whole
// record, or the record that sets the fragment aside.
func (fix *tornRepair) lead(path string, now time.Time) (*Record, []byte, error) {
	if fix.whole != nil {
		return fix.whole, []byte{'\n'}, nil
	}
	fix.aside = fmt.Sprintf("%s.torn-%s", path, now.UTC().Format("20060102T150405.000000000Z"))
	host, _ := os.Hostname()
	rec, line, err := sealLine(Record{
		Operator: "warren",
		Host:     host,
		Action:   TornAction,
		Outcome:  TornOutcome,
		Detail: map[string]string{
			"torn_bytes":  strconv.Itoa(len(fix.frag)),
			"torn_sha256": digestHex(fix.frag),
			"set_aside":   fix.aside,
		},
	}, fix.prev, now)
	if err != nil {
		return nil, nil, err
	}
	return &rec, append(line, '\n'), nil
}

// repair journals buf (the lead and the append's records), then copies
// the fragment aside and cuts it off, and returns where buf will be
// written. The journal comes first: a repair cut short at any point is
// taken up again by the next append.
func (s *FileStore) repair(f *os.File, fix *tornRepair, buf []byte) (int64, error) {
	var after int64
	if fix.prev != nil {
		after = fix.prev.Seq
	}
	if fix.whole != nil {
		err := s.writeJournal(f, journal{offset: fix.cut, after: after, data: append(bytes.Clone(fix.frag), buf...)}, true)
		return fix.cut + int64(len(fix.frag)), err
	}
	j := journal{offset: fix.cut, after: after, data: buf, replaces: int64(len(fix.frag)), replacesHash: digestHex(fix.frag)}
	if err := s.writeJournal(f, j, true); err != nil {
		return 0, err
	}
	if err := writeSynced(fix.aside, fix.frag); err != nil {
		return 0, fmt.Errorf("audit: setting a torn last line of %s aside in %s: %w", s.path, fix.aside, err)
	}
	if err := f.Truncate(fix.cut); err != nil {
		return 0, s.wrap("truncate a torn last line", err)
	}
	return fix.cut, nil
}
