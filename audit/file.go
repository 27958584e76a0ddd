package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
	return s.appendAfter(ctx, func(*Record) ([]Record, error) { return recs, nil })
}

// appendAfter appends the records build makes from the last record (nil
// for an empty file), under the append lock: what build reads is still
// the last record when its records are linked after it. A torn tail that
// warren's journal proves its own is repaired in the same write (see
// torn.go); any other damage refuses the append and changes nothing.
func (s *FileStore) appendAfter(ctx context.Context, build func(prev *Record) ([]Record, error)) ([]Record, error) {
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
	var fix *tornRepair
	if isTorn(err) {
		fix, err = s.provenTorn(f, end)
	}
	if err != nil {
		return nil, s.lastErr(err)
	}
	now := time.Now()
	var buf []byte
	if fix != nil {
		prev, buf, err = fix.lead(s.path, now)
		if err != nil {
			return nil, s.wrap("encode", err)
		}
	}
	recs, err := build(prev)
	if err != nil {
		return nil, err
	}
	if err := validateAll(recs); err != nil || len(recs) == 0 {
		return nil, err
	}
	out := make([]Record, len(recs))
	for i, rec := range recs {
		var line []byte
		out[i], line, err = sealLine(rec, prev, now)
		if err != nil {
			return nil, s.wrap("encode", err)
		}
		prev = &out[i]
		buf = append(append(buf, line...), '\n')
	}
	s.forget()
	if fix != nil {
		end, err = s.repair(f, fix, buf)
	} else {
		err = s.writeJournal(f, journal{offset: end, after: out[0].Seq - 1, data: buf}, false)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(buf); err != nil {
		// Cut a partial line off again so the next append (and verify)
		// does not find a torn record; the lock is still ours. The
		// journal stays: should the cut fail, it proves the rest ours.
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
		if err := SyncDir(filepath.Dir(s.path)); err != nil {
			return nil, s.wrap("fsync directory", err)
		}
	}
	s.dropJournal()
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
	// Check changes nothing: a torn tail is only judged, as the next
	// append would judge it.
	_, err = lastRecord(f, end)
	if isTorn(err) {
		_, err = s.provenTorn(f, end)
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
	f, err := s.open(os.O_RDONLY)
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
	return s.scan(ctx, nil, fn)
}

// ScanWhere is Scan of the lines that hold one of needles, as stored:
// the others are skipped unread (see ScanWhere).
func (s *FileStore) ScanWhere(ctx context.Context, needles [][]byte, fn func(Record) error) error {
	return s.scan(ctx, needles, fn)
}

// scanBuffer holds the longest lines a walk writes (a page's publishing
// record of 512 IDs and digests, about 67 KB) where they are read; a
// longer line is copied out whole.
const scanBuffer = 256 << 10

// scan reads the records, of the lines holding one of needles when
// needles is not nil.
func (s *FileStore) scan(ctx context.Context, needles [][]byte, fn func(Record) error) error {
	_, err := s.scanFrom(ctx, filePlace{}, needles, fn, nil)
	return err
}

// filePlace is a place in the file a scan reached: the file (its device
// and inode), where the next line starts and its number.
type filePlace struct {
	dev, ino uint64
	offset   int64
	line     int
}

// scanFrom reads the records from place on, as scan reads them from the
// start, and returns the place after the last whole line read. A place
// in another file (the log moved aside and a new one begun) or past the
// file's end (cut) is read from the start, restart (when set) called
// first.
func (s *FileStore) scanFrom(ctx context.Context, from filePlace, needles [][]byte, fn func(Record) error, restart func()) (filePlace, error) {
	f, err := s.open(os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		if from.offset > 0 && restart != nil {
			// Moved aside: the log begun at the path is another.
			restart()
		}
		return filePlace{}, nil
	}
	if err != nil {
		return from, s.wrap("open", err)
	}
	defer f.Close()
	if err := lockFile(ctx, f, syscall.LOCK_SH); err != nil {
		return from, s.wrap("lock", err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return from, s.wrap("seek", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return from, s.wrap("unlock", err)
	}
	at := filePlace{}
	if st, err := f.Stat(); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			at.dev, at.ino = uint64(sys.Dev), sys.Ino
		}
	}
	switch {
	case from.dev == at.dev && from.ino == at.ino && from.offset <= size:
		at.offset, at.line = from.offset, from.line
	case from.offset > 0 && restart != nil:
		restart()
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, at.offset, size-at.offset), scanBuffer)
	for line := at.line + 1; ; line++ {
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return at, err
			}
		}
		b, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: its start copied out of the
			// buffer before the rest is read into it.
			var rest []byte
			start := append([]byte(nil), b...)
			rest, err = r.ReadBytes('\n')
			b = append(start, rest...)
		}
		if errors.Is(err, io.EOF) {
			if len(b) > 0 {
				return at, &CorruptError{Line: line, Partial: true}
			}
			return at, nil
		}
		if err != nil {
			return at, s.wrap("read", err)
		}
		if needles == nil || holdsOne(b, needles) {
			rec, perr := parseLine(bytes.TrimSuffix(b, []byte("\n")))
			if perr != nil {
				return at, &CorruptError{Line: line, Err: perr}
			}
			if err := fn(rec); err != nil {
				return at, err
			}
		}
		at.offset, at.line = at.offset+int64(len(b)), line
	}
}

// openLocked opens the file for appending, creating it (0600) and its
// directories (0700) as needed, and holds an exclusive lock on it until
// the file is closed. It refuses a file others may write (modeProblem).
func (s *FileStore) openLocked(ctx context.Context) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return nil, s.wrap("create directory", err)
	}
	for {
		f, err := s.open(os.O_RDWR | os.O_APPEND | os.O_CREATE)
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
		now, nerr := os.Lstat(s.path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			if msg, refuse := modeProblem(s.path, held.Mode()); refuse {
				f.Close()
				return nil, errors.New("audit: " + msg)
			}
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

// open opens the file at the path itself, never what a symbolic link
// there points to: the log is the file the config names, and a link
// (a dangling one above all, whose target an append would create) would
// put it somewhere else. A link is refused with a *linkError.
func (s *FileStore) open(flag int) (*os.File, error) {
	f, err := os.OpenFile(s.path, flag|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if fi, lerr := os.Lstat(s.path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(s.path)
			return nil, &linkError{path: s.path, target: target}
		}
	}
	return f, err
}

// linkError refuses a symbolic link as the audit file.
type linkError struct{ path, target string }

func (e *linkError) Error() string {
	return fmt.Sprintf("audit: %s is a symbolic link (to %s): warren keeps its audit log in a regular file and does not follow a link there; "+
		"name the file itself in the config (audit = \"file:PATH\") or put the file in the link's place", e.path, e.target)
}

// ModeWarning is one sentence naming the file, its mode and the chmod
// that fixes it when others have any access to the file; "" when it is
// its owner's alone, absent, or not a regular file. A file others may
// write is also refused by every append and Check; one they may only
// read is still written.
func (s *FileStore) ModeWarning() string {
	fi, err := os.Lstat(s.path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if msg, _ := modeProblem(s.path, fi.Mode()); msg != "" {
		return "audit file " + msg
	}
	return ""
}

// modeProblem says what mode lets others do to the file at path, in
// words that start with the path ("PATH has mode 0644, …"), or returns
// ""; refuse is true when they may write it: whoever can rewrite the
// file can rewrite the chain, so warren adds nothing to it.
func modeProblem(path string, mode fs.FileMode) (msg string, refuse bool) {
	perm := mode.Perm()
	fix := "`chmod 600 " + shellQuote(path) + "`"
	switch {
	case perm&0o022 != 0:
		return fmt.Sprintf("%s has mode %04o: others can rewrite its records, so warren appends nothing to it until %s", path, perm, fix), true
	case perm&0o077 != 0:
		return fmt.Sprintf("%s has mode %04o, open to others: %s makes it its owner's alone", path, perm, fix), false
	}
	return "", false
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+:@%,=", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (s *FileStore) wrap(op string, err error) error {
	var le *linkError
	if errors.As(err, &le) {
		return err // says all there is to say
	}
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == s.path {
		err = pe.Err // the path is named once already
	}
	return fmt.Errorf("audit: %s %s: %w", op, s.path, err)
}

// lastErr explains why the chain cannot be extended: appending after a
// damaged record would bury the damage in the middle of the file.
func (s *FileStore) lastErr(err error) error {
	var te *TornError
	if errors.As(err, &te) {
		return err // names the damage and the command that shows it
	}
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
	return SyncDir(filepath.Dir(path))
}

// SyncDir makes a name just put in dir (a file created or renamed there)
// durable: the directory's entry, not only the file's bytes.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
