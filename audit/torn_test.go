package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dieMidAppend does what an append does up to its write, and dies after
// the first keep bytes of it: the journal of recs, linked after the
// file's last record, is durable, and only a part of them reached the log.
// It returns the bytes the append was writing.
func dieMidAppend(t *testing.T, s *FileStore, recs []Record, keep func(full []byte) int) []byte {
	t.Helper()
	f, err := s.openLocked(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := lastRecord(f, end)
	if err != nil {
		t.Fatal(err)
	}
	var after int64
	if prev != nil {
		after = prev.Seq
	}
	var buf []byte
	for _, r := range recs {
		r = seal(r, prev, time.Now())
		prev = &r
		line, _ := marshalLine(r)
		buf = append(append(buf, line...), '\n')
	}
	if err := s.writeJournal(f, journal{offset: end, after: after, data: buf}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(buf[:keep(buf)]); err != nil {
		t.Fatal(err)
	}
	return buf
}

func tornCopies(t *testing.T, path string) []string {
	t.Helper()
	m, _ := filepath.Glob(path + ".torn-*")
	return m
}

// A warren killed while it appends leaves the log ending inside the
// bytes its journal names: the next append sets the fragment aside (or,
// for a whole record that lacks only its newline, adds the newline), and
// the chain goes on and verifies.
func TestAnAppendRepairsWhatWarrenWasWritingWhenItDied(t *testing.T) {
	tests := []struct {
		name string
		recs []Record
		keep func(full []byte) int
		// kept is how many of recs survive whole; aside whether a
		// fragment is set aside.
		kept  int
		aside bool
	}{
		{"half of one record", []Record{sample(4)}, func(b []byte) int { return len(b) / 2 }, 0, true},
		{"the first byte of a record", []Record{sample(4)}, func([]byte) int { return 1 }, 0, true},
		{"a group cut inside its third record", []Record{sample(4), sample(5), sample(6)}, func(b []byte) int {
			second := bytes.IndexByte(b[bytes.IndexByte(b, '\n')+1:], '\n') + bytes.IndexByte(b, '\n') + 2
			return second + 40
		}, 2, true},
		{"a whole record short of its newline", []Record{sample(4)}, func(b []byte) int { return len(b) - 1 }, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeChain(t, path, 3)
			s, _ := OpenFile(path)
			full := dieMidAppend(t, s, tt.recs, tt.keep)
			torn, _ := os.ReadFile(path)
			fragment := torn[bytes.LastIndexByte(torn, '\n')+1:]

			intact := 3 + tt.kept // a record short of its newline is read as torn until it has one
			if !tt.aside {
				intact--
			}
			if res, err := Verify(ctx, s); err != nil || res.OK || !res.CrashTail || res.Records != intact ||
				!strings.Contains(strings.Join(res.Lines(), "\n"), "the start of a record warren was writing when it was killed") {
				t.Fatalf("Verify = %+v, %v; want the break named as a crash of warren's after %d records", res, err, intact)
			}
			if err := s.Check(ctx); err != nil {
				t.Fatalf("Check = %v, want the append it foresees to repair the tail", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, torn) {
				t.Fatal("Check changed the file")
			}
			got, err := s.Append(ctx, sample(9))
			if err != nil {
				t.Fatal(err)
			}
			records := 3 + tt.kept + 1
			if tt.aside {
				records++
			}
			mustVerify(t, s, records)
			if got.Seq != int64(records) {
				t.Fatalf("appended seq %d, want %d", got.Seq, records)
			}
			if j, err := os.ReadFile(path + journalSuffix); err != nil || len(j) != 0 {
				t.Fatalf("the journal after a durable append: %d bytes, %v; want it empty", len(j), err)
			}
			all := scanAll(t, s)
			if !tt.aside {
				if len(tornCopies(t, path)) != 0 || !bytes.HasPrefix(full, append(fragment, '\n')) {
					t.Fatalf("a whole record was set aside, or the fragment %q is not it", fragment)
				}
				return
			}
			repair := all[records-2]
			sum := sha256.Sum256(fragment)
			if repair.Action != TornAction || repair.Outcome != TornOutcome ||
				repair.Detail["torn_bytes"] != strconv.Itoa(len(fragment)) || repair.Detail["torn_sha256"] != hex.EncodeToString(sum[:]) {
				t.Fatalf("repair record %+v, want the fragment's size %d and digest", repair, len(fragment))
			}
			copied, err := os.ReadFile(repair.Detail["set_aside"])
			if err != nil || !bytes.Equal(copied, fragment) || !strings.HasPrefix(repair.Detail["set_aside"], path+".torn-") {
				t.Fatalf("the fragment set aside in %q: %q, %v; want %q", repair.Detail["set_aside"], copied, err, fragment)
			}
		})
	}
}

// A repair killed after its journal, before it cut the fragment off, is
// taken up by the next append: that journal names the fragment it
// replaces.
func TestARepairCutShortIsTakenUpAgain(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeChain(t, path, 3)
	s, _ := OpenFile(path)
	dieMidAppend(t, s, []Record{sample(4)}, func(b []byte) int { return len(b) / 3 })
	f, err := s.openLocked(ctx)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := f.Seek(0, io.SeekEnd)
	fix, err := s.provenTorn(f, end)
	if err != nil {
		t.Fatal(err)
	}
	_, lead, _ := fix.lead(path, time.Now())
	j := journal{offset: fix.cut, after: 3, data: lead, replaces: int64(len(fix.frag)), replacesHash: digestHex(fix.frag)}
	if err := s.writeJournal(f, j, true); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := s.Append(ctx, sample(9)); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s, 5)
}

// A tail no interrupted write of warren's explains is damage: Check and
// every append refuse with one sentence naming it and the command that
// shows it, and the file is left exactly as it is.
func TestAppendsStopAfterATailWarrenCannotProveItsOwn(t *testing.T) {
	lastLine := func(raw []byte) (int, []byte) {
		start := bytes.LastIndexByte(raw[:len(raw)-1], '\n') + 1
		return start, raw[start : len(raw)-1]
	}
	tests := []struct {
		name string
		// damage turns a file of three records into the damaged one;
		// s is its store, for a journal.
		damage func(t *testing.T, s *FileStore, raw []byte) []byte
		want   string
	}{
		{"the last record edited, its newline removed", func(t *testing.T, _ *FileStore, raw []byte) []byte {
			start, line := lastLine(raw)
			return append(raw[:start:start], bytes.Replace(line, []byte(`"outcome":"confirmed"`), []byte(`"outcome":"nacked"`), 1)...)
		}, "and no write of warren's left them"},
		{"a whole record that chains, its newline removed", func(t *testing.T, _ *FileStore, raw []byte) []byte {
			return raw[:len(raw)-1]
		}, "and no write of warren's left them"},
		{"the last record warren appended cut short later (its journal emptied)", func(t *testing.T, s *FileStore, _ []byte) []byte {
			if _, err := s.Append(context.Background(), sample(4)); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(s.path)
			return raw[:len(raw)-9]
		}, "names none"},
		{"the last record edited while warren's journal names the true one", func(t *testing.T, s *FileStore, raw []byte) []byte {
			start, line := lastLine(raw)
			if err := os.WriteFile(s.path, raw[:start], 0o600); err != nil {
				t.Fatal(err)
			}
			dieMidAppend(t, s, []Record{sample(3)}, func([]byte) int { return 0 })
			return append(raw[:start:start], bytes.Replace(line, []byte(`"queue":"orders"`), []byte(`"queue":"orderz"`), 1)...)
		}, "and they are not what warren was writing there"},
		{"a fragment after a line that is not a record", func(t *testing.T, _ *FileStore, raw []byte) []byte {
			return append(bytes.Clone(raw), []byte("{\"seq\":4,broken\n{\"seq\":5,")...)
		}, "after a line that is not a whole record either"},
		{"text that is no record", func(t *testing.T, _ *FileStore, raw []byte) []byte {
			return append(bytes.Clone(raw), []byte("rm -rf")...)
		}, "and no write of warren's left them"},
		{"a journal of another file at the path", func(t *testing.T, s *FileStore, raw []byte) []byte {
			dieMidAppend(t, s, []Record{sample(4)}, func(b []byte) int { return len(b) / 2 })
			torn, _ := os.ReadFile(s.path)
			// The log moved aside, and a copy of it put at the path.
			if err := os.Rename(s.path, s.path+".old"); err != nil {
				t.Fatal(err)
			}
			return torn
		}, "and they are not what warren was writing there"},
		{"an unreadable journal", func(t *testing.T, s *FileStore, raw []byte) []byte {
			buf := dieMidAppend(t, s, []Record{sample(4)}, func(b []byte) int { return len(b) / 2 })
			j, _ := os.ReadFile(s.path + journalSuffix)
			if err := os.WriteFile(s.path+journalSuffix, j[:len(j)-len(buf)/4], 0o600); err != nil {
				t.Fatal(err)
			}
			torn, _ := os.ReadFile(s.path)
			return torn
		}, "can be shown to have left them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeChain(t, path, 3)
			raw, _ := os.ReadFile(path)
			s, _ := OpenFile(path)
			damaged := tt.damage(t, s, raw)
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			journalBefore, _ := os.ReadFile(path + journalSuffix)
			checkErr := s.Check(ctx)
			_, appendErr := s.Append(ctx, sample(9))
			for name, err := range map[string]error{"Check": checkErr, "Append": appendErr} {
				if err == nil {
					t.Fatalf("%s after the damage succeeded; it would bury it", name)
				}
				msg := err.Error()
				if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "`warren audit verify` shows the damage") ||
					!strings.Contains(msg, path+" ends with ") {
					t.Fatalf("%s = %q, want the damage (%q) and the command that shows it", name, msg, tt.want)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
				t.Fatalf("the file changed from %d to %d bytes", len(damaged), len(after))
			}
			if journalAfter, _ := os.ReadFile(path + journalSuffix); !bytes.Equal(journalAfter, journalBefore) {
				t.Fatal("the journal changed")
			}
			if c := tornCopies(t, path); len(c) != 0 {
				t.Fatalf("something was set aside: %v", c)
			}
			if res, err := Verify(ctx, s); err != nil || res.OK || res.CrashTail {
				t.Fatalf("Verify = %+v, %v; want the damage reported, not taken for a crash", res, err)
			}
		})
	}
}

// Reading never repairs: Check, Last, Scan and Verify leave a torn file
// and its journal byte for byte as they were, even when the next append
// would repair it.
func TestReadingATornLogChangesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeChain(t, path, 3)
	s, _ := OpenFile(path)
	dieMidAppend(t, s, []Record{sample(4)}, func(b []byte) int { return len(b) / 2 })
	torn, _ := os.ReadFile(path)
	journal, _ := os.ReadFile(path + journalSuffix)
	_ = s.Check(ctx)
	_, _, _ = s.Last(ctx)
	_ = s.Scan(ctx, func(Record) error { return nil })
	if res, err := Verify(ctx, s); err != nil || res.OK || !strings.Contains(res.Reason, "without its newline") {
		t.Fatalf("Verify = %+v, %v; want the torn line named", res, err)
	}
	after, _ := os.ReadFile(path)
	journalAfter, _ := os.ReadFile(path + journalSuffix)
	if !bytes.Equal(after, torn) || !bytes.Equal(journalAfter, journal) || len(tornCopies(t, path)) != 0 {
		t.Fatal("reading the log changed it, its journal, or set something aside")
	}
}
