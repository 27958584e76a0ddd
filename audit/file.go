package audit

import (
	"bufio"
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
	"sync"
	"syscall"
	"time"
)

// minFreeBytes is the free space Check demands, so a store on a full disk
// refuses an action up front instead of failing after its intent record.
const minFreeBytes = 1 << 20

// FileStore is an append-only JSONL file, one record per line. Every
// append opens the file, takes an exclusive flock (which serialises
// writers in any process on this machine), reads the last record from the
// end of the file, appends its lines and fsyncs once before releasing the
// lock. The last record it wrote itself is kept, and read again only when
// the file changed since (another writer, another file at the path).
type FileStore struct {
	path string

	mu   sync.Mutex
	tail *fileTail
}

// fileTail is the last record this store appended and the file as it
// left it: same file, same size and same modification time mean no one
// appended since.
type fileTail struct {
	rec   Record
	dev   uint64
	ino   uint64
	size  int64
	mtime syscall.Timespec
}

// OpenFile returns the store at path ("~/" is the home directory). The
// file and its directories are created by the first Check or Append.
func OpenFile(path string) (*FileStore, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("audit: expand %q: %w", path, err)
		}
		path = filepath.Join(home, rest)
	}
	if path == "" {
		return nil, errors.New("audit: empty file path (use audit = \"file\" for the default)")
	}
	return &FileStore{path: path}, nil
}

// Path is the file the store writes.
func (s *FileStore) Path() string { return s.path }

func (s *FileStore) Describe() string { return "file " + s.path }

func (s *FileStore) Close() error { return nil }

func (s *FileStore) Append(ctx context.Context, rec Record) (Record, error) {
	out, err := s.AppendAll(ctx, []Record{rec})
	if err != nil {
		return Record{}, err
	}
	return out[0], nil
}

func (s *FileStore) AppendAll(ctx context.Context, recs []Record) ([]Record, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	if err := validateAll(recs); err != nil {
		return nil, err
	}
	f, err := s.openLocked(ctx)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, s.wrap("seek", err)
	}
	prev, err := s.last(f, end)
	if isTorn(err) {
		prev, end, err = s.setAsideTorn(f, end)
	}
	if err != nil {
		return nil, s.lastErr(err)
	}
	now := time.Now()
	out := make([]Record, len(recs))
	var buf []byte
	for i, rec := range recs {
		out[i] = seal(rec, prev, now)
		prev = &out[i]
		line, err := marshalLine(out[i])
		if err != nil {
			return nil, s.wrap("encode", err)
		}
		buf = append(append(buf, line...), '\n')
	}
	s.forget()
	if _, err := f.Write(buf); err != nil {
		// Cut a partial line off again so the next append (and verify)
		// does not find a torn record; the lock is still ours.
		_ = f.Truncate(end)
		return nil, s.wrap("write", err)
	}
	if err := f.Sync(); err != nil {
		// The caller is told nothing was recorded, and acts on that: the
		// records must not stay behind to be read as if they had been
		// (an intent left as an incomplete operation to resume).
		_ = f.Truncate(end)
		return nil, s.wrap("fsync", err)
	}
	if end == 0 {
		// A new file's directory entry must be durable too.
		if err := syncDir(filepath.Dir(s.path)); err != nil {
			return nil, s.wrap("fsync directory", err)
		}
	}
	s.remember(f, *prev)
	return out, nil
}

// last is the file's last record: the one this store appended, if the
// file is as it left it, or else read from the file.
func (s *FileStore) last(f *os.File, end int64) (*Record, error) {
	s.mu.Lock()
	t := s.tail
	s.mu.Unlock()
	if t != nil {
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err == nil && uint64(st.Dev) == t.dev && st.Ino == t.ino &&
			st.Size == end && end == t.size && st.Mtim == t.mtime {
			rec := t.rec
			return &rec, nil
		}
	}
	return lastRecord(f, end)
}

func (s *FileStore) forget() {
	s.mu.Lock()
	s.tail = nil
	s.mu.Unlock()
}

// remember keeps rec as the last record of f, which this store just
// wrote and still holds locked.
func (s *FileStore) remember(f *os.File, rec Record) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return
	}
	s.mu.Lock()
	s.tail = &fileTail{rec: rec, dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim}
	s.mu.Unlock()
}

func (s *FileStore) Check(ctx context.Context) error {
	f, err := s.openLocked(ctx)
	if err != nil {
		return err
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return s.wrap("seek", err)
	}
	_, err = lastRecord(f, end)
	if isTorn(err) {
		_, _, err = s.setAsideTorn(f, end)
	}
	if err != nil {
		return s.lastErr(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return s.wrap("statfs", err)
	}
	if free := st.Bavail * uint64(st.Bsize); free < minFreeBytes {
		return fmt.Errorf("audit: %s: only %d bytes free on its filesystem", s.path, free)
	}
	return nil
}

func (s *FileStore) Last(ctx context.Context) (Record, bool, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, s.wrap("open", err)
	}
	defer f.Close()
	if err := lockFile(ctx, f, syscall.LOCK_SH); err != nil {
		return Record{}, false, s.wrap("lock", err)
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return Record{}, false, s.wrap("seek", err)
	}
	prev, err := lastRecord(f, end)
	if err != nil {
		return Record{}, false, s.lastErr(err)
	}
	if prev == nil {
		return Record{}, false, nil
	}
	return *prev, true, nil
}

// Scan reads the records present when it starts. It measures the file
// under a shared lock, which waits out an append in progress, and then
// reads without holding it, so a long scan never stalls writers.
func (s *FileStore) Scan(ctx context.Context, fn func(Record) error) error {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return s.wrap("open", err)
	}
	defer f.Close()
	if err := lockFile(ctx, f, syscall.LOCK_SH); err != nil {
		return s.wrap("lock", err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return s.wrap("seek", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return s.wrap("unlock", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<16)
	for line := 1; ; line++ {
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(b) > 0 {
				return &CorruptError{Line: line, Partial: true}
			}
			return nil
		}
		if err != nil {
			return s.wrap("read", err)
		}
		rec, perr := parseLine(bytes.TrimSuffix(b, []byte("\n")))
		if perr != nil {
			return &CorruptError{Line: line, Err: perr}
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// openLocked opens the file for appending, creating it (0600) and its
// directories (0700) as needed, and holds an exclusive lock on it until
// the file is closed.
func (s *FileStore) openLocked(ctx context.Context) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return nil, s.wrap("create directory", err)
	}
	for {
		f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, s.wrap("open for writing", err)
		}
		if err := lockFile(ctx, f, syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, s.wrap("lock", err)
		}
		// While this writer waited for the lock, an operator may have
		// moved the file aside (to start a new chain): the records
		// belong in the file at the path, not in the one moved.
		held, herr := f.Stat()
		now, nerr := os.Stat(s.path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
		if herr != nil {
			return nil, s.wrap("stat", herr)
		}
		if nerr != nil && !errors.Is(nerr, fs.ErrNotExist) {
			return nil, s.wrap("stat", nerr)
		}
	}
}

func (s *FileStore) wrap(op string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == s.path {
		err = pe.Err // the path is named once already
	}
	return fmt.Errorf("audit: %s %s: %w", op, s.path, err)
}

// lastErr explains why the chain cannot be extended: appending after a
// damaged record would bury the damage in the middle of the file.
func (s *FileStore) lastErr(err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return fmt.Errorf("audit: %s ends with a damaged record (%w); nothing more is written there until an operator runs `warren audit verify` and moves the file aside", s.path, err)
	}
	return s.wrap("read last record", err)
}

// lockFile takes a flock without blocking in the kernel, so a holder that
// hangs turns into the caller's context error instead of a stuck action.
func lockFile(ctx context.Context, f *os.File, how int) error {
	wait := 100 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for another writer: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// lastRecord reads the final line by scanning backwards from end, so an
// append costs the same on a large file as on a small one. It returns nil
// for an empty file and a *CorruptError when the file does not end in a
// whole, decodable record.
func lastRecord(f *os.File, end int64) (*Record, error) {
	if end == 0 {
		return nil, nil
	}
	var tail [1]byte
	if _, err := f.ReadAt(tail[:], end-1); err != nil {
		return nil, err
	}
	if tail[0] != '\n' {
		return nil, &CorruptError{Partial: true}
	}
	start, err := lastNewline(f, end-1)
	if err != nil {
		return nil, err
	}
	line := make([]byte, end-1-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return nil, err
	}
	rec, err := parseLine(line)
	if err != nil {
		return nil, &CorruptError{Err: err}
	}
	return &rec, nil
}

// Torn tails. A process killed while it appends (SIGKILL, a power cut)
// can leave the file ending inside a line: the kernel stops a write to a
// file between two pages when the writer gets a fatal signal. Nothing was
// done on the strength of that line (a record is acted on only once its
// fsync returned), so the next writer sets it aside rather than stop
// every operation until someone moves the file: the fragment is copied
// to PATH.torn-TIME, the file is cut back to its last whole record, and
// an "audit" record ("torn_record_set_aside") names the copy, the
// fragment's size and its sha256, chained as any other. Only a fragment
// that begins as a record does, after a whole record, is taken for an
// interrupted write; anything else still stops appends.

// TornAction and TornOutcome mark the record that sets a torn tail aside.
const (
	TornAction  = "audit"
	TornOutcome = "torn_record_set_aside"
)

func isTorn(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce) && ce.Partial
}

// setAsideTorn sets a torn tail aside (see above) in f, held locked and
// ending at end, and returns the record it appended and the file's new
// end.
func (s *FileStore) setAsideTorn(f *os.File, end int64) (*Record, int64, error) {
	cut, err := lastNewline(f, end)
	if err != nil {
		return nil, end, err
	}
	frag := make([]byte, end-cut)
	if _, err := f.ReadAt(frag, cut); err != nil {
		return nil, end, s.wrap("read", err)
	}
	if !bytes.HasPrefix(frag, []byte(`{"seq":`)) {
		return nil, end, &CorruptError{Partial: true}
	}
	prev, err := lastRecord(f, cut)
	if err != nil {
		return nil, end, err
	}
	if rec, err := parseLine(frag); err == nil && rec.Hash == rec.ComputeHash() &&
		(prev == nil && rec.Seq == 1 || prev != nil && rec.Seq == prev.Seq+1 && rec.PrevHash == prev.Hash) {
		// A whole record that chains, missing only its newline (a file
		// restored by a tool that drops the last one): it is kept, and
		// the newline added.
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return nil, end, s.wrap("write", err)
		}
		if err := f.Sync(); err != nil {
			return nil, end, s.wrap("fsync", err)
		}
		return &rec, end + 1, nil
	}
	aside := fmt.Sprintf("%s.torn-%s", s.path, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := writeSynced(aside, frag); err != nil {
		return nil, end, fmt.Errorf("audit: setting a torn last line of %s aside in %s: %w", s.path, aside, err)
	}
	if err := f.Truncate(cut); err != nil {
		return nil, end, s.wrap("truncate a torn last line", err)
	}
	sum := sha256.Sum256(frag)
	host, _ := os.Hostname()
	rec := seal(Record{
		Operator: "warren",
		Host:     host,
		Action:   TornAction,
		Outcome:  TornOutcome,
		Detail: map[string]string{
			"torn_bytes":  strconv.Itoa(len(frag)),
			"torn_sha256": hex.EncodeToString(sum[:]),
			"set_aside":   aside,
		},
	}, prev, time.Now())
	line, err := marshalLine(rec)
	if err != nil {
		return nil, cut, s.wrap("encode", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		_ = f.Truncate(cut)
		return nil, cut, s.wrap("write", err)
	}
	if err := f.Sync(); err != nil {
		return nil, cut, s.wrap("fsync", err)
	}
	return &rec, cut + int64(len(line)) + 1, nil
}

// lastNewline is the offset just after the last newline before end, 0
// when there is none.
func lastNewline(f *os.File, end int64) (int64, error) {
	const chunk = 8 << 10
	pos := end
	for pos > 0 {
		n := min(int64(chunk), pos)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, pos-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
	}
	return 0, nil
}

// writeSynced creates path (never over an existing file) with b, synced
// with its directory entry.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
