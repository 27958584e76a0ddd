package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/warrenops/warren/domain"
)

// headChain is 25 records in three operations (sample's op-0 holds seqs
// 1–9, op-1 10–19, op-2 20–25).
const headChain = 25

// headCase tampers with a chain of headChain records (or leaves it) and
// names what Verify must say with the head kept at expectSeq.
type headCase struct {
	name string
	// tamper is the chain the store holds afterwards, from the one
	// written; nil leaves the store alone.
	tamper    func(recs []Record) []Record
	expectSeq int64
	// wantOK is the verdict; wantLine is the verdict line, or part of
	// it; wantHeld and wantFollowing are what became of the expected
	// head.
	wantOK        bool
	wantLine      string
	wantHeld      bool
	wantFollowing int
	// plainOK is the verdict of Verify without the expected head: the
	// cases it misses are why the head is kept.
	plainOK bool
}

// rehashFrom rewrites recs as one who can write the store would: the
// record at index i is changed and every record from there on hashed
// again, so the chain is valid.
func rehashFrom(recs []Record, i int) []Record {
	out := append([]Record(nil), recs[:i]...)
	for j := i; j < len(recs); j++ {
		r := recs[j]
		if j == i {
			r.Queue = "orders-rewritten"
		}
		var prev *Record
		if j > 0 {
			prev = &out[j-1]
		}
		out = append(out, seal(r, prev, time.Now()))
	}
	return out
}

func headCases() []headCase {
	return []headCase{
		{name: "an untouched log holds its head", expectSeq: 25, wantOK: true, wantLine: "ok: 25 records, chain intact",
			wantHeld: true, plainOK: true},
		{name: "an untouched log holds an earlier head and says what follows it", expectSeq: 19, wantOK: true,
			wantLine: "ok: 25 records, chain intact", wantHeld: true, wantFollowing: 6, plainOK: true},
		{name: "the last record deleted", tamper: func(r []Record) []Record { return r[:24] }, expectSeq: 25,
			wantLine: "the log ends at seq 24, before the expected head seq 25: records were removed from its end", plainOK: true},
		{name: "the last operation deleted", tamper: func(r []Record) []Record { return r[:19] }, expectSeq: 25,
			wantLine: "the log ends at seq 19, before the expected head seq 25: records were removed from its end", plainOK: true},
		{name: "every record deleted", tamper: func([]Record) []Record { return nil }, expectSeq: 25,
			wantLine: "the log is empty, but the expected head is seq 25: its records were removed", plainOK: true},
		{name: "the whole chain rewritten and rehashed", tamper: func(r []Record) []Record { return rehashFrom(r, 2) }, expectSeq: 25,
			wantLine: "the record at seq 25 has hash sha256:", plainOK: true},
		{name: "a rewritten, shorter chain against an earlier head", tamper: func(r []Record) []Record { return rehashFrom(r, 2)[:21] },
			expectSeq: 19, wantLine: "the record at seq 19 has hash sha256:", plainOK: true},
		{name: "a record edited without its hash, past the expected head", tamper: editSeq(7), expectSeq: 5,
			wantLine: "broken at seq 7: hash mismatch", wantHeld: true, wantFollowing: 1},
		{name: "a record edited without its hash, before the expected head", tamper: editSeq(7), expectSeq: 25,
			wantLine: "broken at seq 7: hash mismatch"},
	}
}

// editSeq changes the record at seq without hashing it again.
func editSeq(seq int64) func([]Record) []Record {
	return func(recs []Record) []Record {
		out := append([]Record(nil), recs...)
		out[seq-1].Queue = "orders-edited"
		return out
	}
}

// checkHeadCase runs Verify with and without the expected head on s,
// which holds the tampered chain; head is the head kept at tc.expectSeq.
func checkHeadCase(t *testing.T, s Store, tc headCase, head domain.AuditHead) {
	t.Helper()
	ctx := context.Background()
	res, err := VerifyWith(ctx, s, VerifyOptions{ExpectHead: &head})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != tc.wantOK || !strings.Contains(res.String(), tc.wantLine) {
		t.Fatalf("Verify = ok %v %q, want ok %v %q", res.OK, res.String(), tc.wantOK, tc.wantLine)
	}
	if e := res.Expect; e == nil || e.Held != tc.wantHeld || e.Following != tc.wantFollowing {
		t.Fatalf("expected head %+v: want held %v with %d following", e, tc.wantHeld, tc.wantFollowing)
	}
	lines := res.Lines()
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "head") {
		t.Fatalf("the last line %q does not name the head", last)
	}
	plain, err := Verify(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if plain.OK != tc.plainOK {
		t.Fatalf("Verify without the head = %q, want ok %v", plain.String(), tc.plainOK)
	}
}

func TestFileVerifyWithTheKeptHeadDetectsWhatIsMissing(t *testing.T) {
	for _, tc := range headCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			recs := writeChain(t, path, headChain)
			if tc.tamper != nil {
				var b bytes.Buffer
				for _, r := range tc.tamper(recs) {
					line, err := marshalLine(r)
					if err != nil {
						t.Fatal(err)
					}
					b.Write(append(line, '\n'))
				}
				if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s, _ := OpenFile(path)
			checkHeadCase(t, s, tc, HeadOf(recs[tc.expectSeq-1]))
		})
	}
}

// replaceRows makes recs the table's whole content, as a role that can
// DELETE from it with its triggers off (its owner, a superuser) could.
func replaceRows(t *testing.T, admin *pgx.Conn, table string, recs []Record) {
	t.Helper()
	ctx := context.Background()
	ident := pgx.Identifier{table}.Sanitize()
	if _, err := admin.Exec(ctx, "DELETE FROM "+ident); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		line, err := marshalLine(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, "INSERT INTO "+ident+" (seq, time, operation, outcome, hash, record) VALUES ($1, $2, $3, $4, $5, $6)",
			r.Seq, r.Time, r.Operation, r.Outcome, r.Hash, string(line)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestVerifyWithoutAStoreFileIsAnEmptyLogThatFailsAKeptHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, _ := OpenFile(path)
	res, err := Verify(context.Background(), s)
	if err != nil || !res.OK || strings.Join(res.Lines(), "\n") != "ok: 0 records, chain intact\nhead: empty log" {
		t.Fatalf("Verify of no file = %q, %v", res.Lines(), err)
	}
	head := domain.AuditHead{Seq: 3, Hash: strings.Repeat("ab", 32)}
	res, err = VerifyWith(context.Background(), s, VerifyOptions{ExpectHead: &head})
	if err != nil || res.OK || !strings.HasPrefix(res.String(), "the log is empty") {
		t.Fatalf("Verify of no file with a kept head = %q, %v", res.String(), err)
	}
}

func TestVerifyLinesEndWithTheHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	recs := writeChain(t, path, 4)
	s, _ := OpenFile(path)
	for _, tt := range []struct {
		kept int
		says string
	}{
		{1, "the expected head seq 2 is there, and 2 records follow it"},
		{2, "the expected head seq 3 is there, and 1 record follows it"},
		{3, "the expected head seq 4 is there, and is the last record"},
	} {
		kept := HeadOf(recs[tt.kept])
		res, err := VerifyWith(context.Background(), s, VerifyOptions{ExpectHead: &kept})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"ok: 4 records, chain intact", tt.says, "head seq 4 sha256:" + recs[3].Hash}
		if got := res.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestParseHeadReadsWhatWarrenPrints(t *testing.T) {
	hash := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		in   string
		want domain.AuditHead
		bad  string
	}{
		{in: "42:sha256:" + hash, want: domain.AuditHead{Seq: 42, Hash: hash}},
		{in: "42:" + hash, want: domain.AuditHead{Seq: 42, Hash: hash}},
		{in: " 7:" + strings.ToUpper(hash) + " ", want: domain.AuditHead{Seq: 7, Hash: hash}},
		{in: "42", bad: "want SEQ:HASH"},
		{in: "seq 42 sha256:" + hash, bad: "not a record number"},
		{in: "0:" + hash, bad: "not a record number"},
		{in: "42:sha256:" + hash[:60], bad: "not 64 hex digits"},
		{in: "42:md5:" + hash, bad: "not 64 hex digits"},
	}
	for _, tt := range tests {
		got, err := ParseHead(tt.in)
		switch {
		case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad) || !strings.Contains(err.Error(), "SEQ:HASH")):
			t.Errorf("ParseHead(%q) = %v, %v; want an error saying %q and naming SEQ:HASH", tt.in, got, err, tt.bad)
		case tt.bad == "" && (err != nil || got != tt.want):
			t.Errorf("ParseHead(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	h := domain.AuditHead{Seq: 42, Hash: hash}
	if back, err := ParseHead("42:" + strings.TrimPrefix(h.String(), "seq 42 ")); err != nil || back != h {
		t.Fatalf("the printed head does not read back: %v, %v", back, err)
	}
}
