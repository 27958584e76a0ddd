package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestFileAppendBuildsAVerifiableChain(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state", "warren")
	s, err := OpenFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Last(ctx); err != nil || ok {
		t.Fatalf("Last on a missing file = ok %v, err %v; want empty", ok, err)
	}
	mustVerify(t, s, 0)
	var appended []Record
	for i := 1; i <= 5; i++ {
		r, err := s.Append(ctx, sample(i))
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		appended = append(appended, r)
	}
	for i, r := range appended {
		if r.Seq != int64(i+1) || (i > 0 && r.PrevHash != appended[i-1].Hash) {
			t.Fatalf("record %d = seq %d prev %q", i, r.Seq, r.PrevHash)
		}
	}
	sameRecords(t, scanAll(t, s), appended)
	mustVerify(t, s, 5)
	last, ok, err := s.Last(ctx)
	if err != nil || !ok || last.Hash != appended[4].Hash {
		t.Fatalf("Last = %+v %v %v, want seq 5", last, ok, err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, s.Path(): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}
}

func TestFileAppendAfterALongRecordAndALargeFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeChain(t, path, 10_000)
	s, _ := OpenFile(path)
	long := sample(0)
	long.LogicalIDs = strings.Split(strings.Repeat("evt-0123456789,", 3000), ",")
	first, err := s.Append(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Append(ctx, sample(1))
	if err != nil {
		t.Fatal(err)
	}
	if first.Seq != 10_001 || second.Seq != 10_002 || second.PrevHash != first.Hash {
		t.Fatalf("appends after 10 000 records: seq %d then %d, linked %v", first.Seq, second.Seq, second.PrevHash == first.Hash)
	}
	mustVerify(t, s, 10_002)
}

// tamper changes the file under a chain of 10 records; each case names the
// seq Verify must report first.
func TestVerifyNamesTheFirstBrokenSeq(t *testing.T) {
	tests := []struct {
		name       string
		tamper     func(lines [][]byte) [][]byte
		wantSeq    int64
		wantReason string
	}{
		{"one byte of a value edited", func(l [][]byte) [][]byte {
			l[4] = bytes.Replace(l[4], []byte(`"queue":"orders"`), []byte(`"queue":"orderz"`), 1)
			return l
		}, 5, "hash mismatch"},
		{"one byte of a stored hash edited", func(l [][]byte) [][]byte {
			i := bytes.LastIndex(l[6], []byte(`"hash":"`)) + len(`"hash":"`)
			l[6][i] ^= 1
			return l
		}, 7, "hash mismatch"},
		{"a record deleted", func(l [][]byte) [][]byte {
			return append(l[:5:5], l[6:]...)
		}, 6, "seq gap"},
		{"the first record deleted", func(l [][]byte) [][]byte { return l[1:] }, 1, "seq gap"},
		{"two records swapped", func(l [][]byte) [][]byte {
			l[2], l[3] = l[3], l[2]
			return l
		}, 3, "seq gap"},
		{"a line made unreadable", func(l [][]byte) [][]byte {
			l[7] = []byte(`{"seq":8,`)
			return l
		}, 8, "line 8: unreadable"},
		{"a key given twice, the one read by grep changed", func(l [][]byte) [][]byte {
			l[5] = bytes.Replace(l[5], []byte(`"queue":"orders"`), []byte(`"queue":"orderz","queue":"orders"`), 1)
			return l
		}, 6, "line 6: unreadable"},
		{"a key in another case", func(l [][]byte) [][]byte {
			l[5] = bytes.Replace(l[5], []byte(`"queue":"orders"`), []byte(`"Queue":"orders"`), 1)
			return l
		}, 6, "line 6: unreadable"},
		{"the last line torn by a crash", func(l [][]byte) [][]byte {
			l[9] = l[9][:len(l[9])/2]
			return l
		}, 10, "line 10: partial record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeChain(t, path, 10)
			raw, _ := os.ReadFile(path)
			lines := bytes.SplitAfter(raw, []byte("\n"))[:10]
			for i := range lines {
				lines[i] = bytes.TrimSuffix(lines[i], []byte("\n"))
			}
			lines = tt.tamper(lines)
			out := bytes.Join(lines, []byte("\n"))
			if !strings.Contains(tt.name, "torn") {
				out = append(out, '\n')
			}
			if err := os.WriteFile(path, out, 0o600); err != nil {
				t.Fatal(err)
			}
			s, _ := OpenFile(path)
			var each []int64 // what a reader acting on the log is given
			res, err := VerifyWith(context.Background(), s, VerifyOptions{Each: func(r Record) { each = append(each, r.Seq) }})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || res.BrokenSeq != tt.wantSeq || !strings.Contains(res.Reason, tt.wantReason) {
				t.Fatalf("Verify = %+v, want broken at seq %d with %q", res, tt.wantSeq, tt.wantReason)
			}
			if res.Records != int(tt.wantSeq-1) {
				t.Fatalf("intact records before the break = %d, want %d", res.Records, tt.wantSeq-1)
			}
			if len(each) != int(tt.wantSeq-1) || len(each) > 0 && (each[0] != 1 || each[len(each)-1] != tt.wantSeq-1) {
				t.Fatalf("Each was given seqs %v, want 1 to %d: the records before the break, no other", each, tt.wantSeq-1)
			}
		})
	}
}

// Root ignores permission bits, so an unwritable store is made from things
// the kernel refuses to anyone: a path that is a directory, or one whose
// parent is a regular file.
func TestUnwritableFileStoreFailsCheckAndAppend(t *testing.T) {
	tests := []struct {
		name  string
		setup func(dir string) string
		want  string
	}{
		{"audit path is a directory", func(dir string) string {
			p := filepath.Join(dir, "audit.jsonl")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p
		}, "is a directory"},
		{"parent is a regular file", func(dir string) string {
			p := filepath.Join(dir, "state")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(p, "warren", "audit.jsonl")
		}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t.TempDir())
			s, err := OpenFile(path)
			if err != nil {
				t.Fatalf("OpenFile must not touch the disk: %v", err)
			}
			ctx := context.Background()
			if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Check = %v, want an error naming %s and %q", err, path, tt.want)
			}
			if _, err := s.Append(ctx, sample(1)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Append = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCheckAddsNoRecord(t *testing.T) {
	ctx := context.Background()
	s, _ := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	for range 3 {
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if recs := scanAll(t, s); len(recs) != 0 {
		t.Fatalf("Check wrote %d records", len(recs))
	}
}

func TestConcurrentFileStoresKeepOneChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const writers, each = 4, 250
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	seqs := make(chan int64, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A store per goroutine: separate descriptors contend on flock
			// exactly as separate processes do.
			s, err := OpenFile(path)
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < each; {
				// Writers 0 and 1 append one record at a time, the others
				// groups of up to three: each store's remembered tail
				// must notice every other writer's records.
				var batch []Record
				for k := 0; k < 1+(i+w)%3*(w/2) && i < each; k++ {
					r := sample(i)
					r.Operator = fmt.Sprintf("writer-%d", w)
					batch = append(batch, r)
					i++
				}
				got, err := s.AppendAll(context.Background(), batch)
				if err != nil {
					errs <- err
					return
				}
				for k, r := range got {
					if k > 0 && r.Seq != got[k-1].Seq+1 {
						errs <- fmt.Errorf("a group was split: seq %d after %d", r.Seq, got[k-1].Seq)
						return
					}
					seqs <- r.Seq
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(seqs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for q := range seqs {
		if seen[q] {
			t.Fatalf("seq %d handed out twice", q)
		}
		seen[q] = true
	}
	s, _ := OpenFile(path)
	mustVerify(t, s, writers*each)
}

func TestOpenParsesStoreSpecs(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	tests := []struct {
		spec, want string
		fails      bool
	}{
		{spec: "file", want: "file /var/state/warren/audit.jsonl"},
		{spec: "", want: "file /var/state/warren/audit.jsonl"},
		{spec: "file:/srv/a.jsonl", want: "file /srv/a.jsonl"},
		{spec: "file:", fails: true},
		{spec: "postgres", fails: true},
		{spec: "s3:bucket", fails: true},
	}
	for _, tt := range tests {
		s, err := Open(tt.spec, "")
		if tt.fails != (err != nil) {
			t.Errorf("Open(%q) error = %v, want failure %v", tt.spec, err, tt.fails)
			continue
		}
		if err == nil && s.Describe() != tt.want {
			t.Errorf("Open(%q) = %s, want %s", tt.spec, s.Describe(), tt.want)
		}
	}
	t.Setenv("XDG_STATE_HOME", "relative/dir")
	t.Setenv("HOME", "/home/ana")
	if p, _ := DefaultFilePath(); p != "/home/ana/.local/state/warren/audit.jsonl" {
		t.Errorf("relative XDG_STATE_HOME must be ignored, got %s", p)
	}
}

func TestFileAppendAllStoresAGroupAtOnceOrNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.AppendAll(ctx, []Record{sample(1), sample(2), sample(3)})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Seq != 1 || got[2].Seq != 3 || got[1].PrevHash != got[0].Hash || got[2].PrevHash != got[1].Hash {
		t.Fatalf("group not chained in order: %+v", got)
	}
	bad := sample(4)
	bad.Outcome = ""
	if _, err := s.AppendAll(ctx, []Record{sample(4), bad}); err == nil {
		t.Fatal("a group with a record without an outcome was stored")
	}
	sameRecords(t, scanAll(t, s), got)
	mustVerify(t, s, 3)
}

func TestFileStoreRereadsAFileReplacedBehindIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a, _ := OpenFile(path)
	if _, err := a.AppendAll(ctx, []Record{sample(1), sample(2)}); err != nil {
		t.Fatal(err)
	}
	// An operator moves the file aside; another writer starts a new one
	// with as many bytes as the old had: a's remembered tail is stale.
	if err := os.Rename(path, filepath.Join(dir, "old.jsonl")); err != nil {
		t.Fatal(err)
	}
	b, _ := OpenFile(path)
	if _, err := b.AppendAll(ctx, []Record{sample(1), sample(2)}); err != nil {
		t.Fatal(err)
	}
	r, err := a.Append(ctx, sample(3))
	if err != nil {
		t.Fatal(err)
	}
	if r.Seq != 3 {
		t.Fatalf("seq %d after the new file's 2 records", r.Seq)
	}
	mustVerify(t, a, 3)
}

// An operator moves the file aside to start a new chain while a writer
// waits for the lock: the writer's records go to the file at the path,
// never into the one moved aside.
func TestAWriterWaitingForTheLockFollowsTheFileAtThePath(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeChain(t, path, 3)
	before, _ := os.ReadFile(path)
	holder, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockFile(ctx, holder, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s, _ := OpenFile(path)
	appended := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, sample(9))
		appended <- err
	}()
	time.Sleep(100 * time.Millisecond) // the writer waits for the lock
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	holder.Close() // releases the lock
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if moved, _ := os.ReadFile(path + ".old"); !bytes.Equal(moved, before) {
		t.Fatal("the writer appended to the file moved aside")
	}
	res, err := Verify(ctx, s)
	if err != nil || !res.OK || res.Records != 1 {
		t.Fatalf("the new file: %+v, %v; want a chain of the one record", res, err)
	}
}
