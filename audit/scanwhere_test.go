package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
)

// whereLog is a log for ScanWhere: every tenth record final, record 7 an
// intent naming a file's sha256, and record 13 longer than the reader's
// buffer (four pages' records of 512 IDs and digests).
func whereLog() []Record {
	var recs []Record
	for i := 1; i <= 30; i++ {
		r := sample(i)
		switch {
		case i%10 == 0:
			r.Outcome = domain.OutcomeFinal
		case i == 7:
			r.Outcome, r.Detail = domain.OutcomeIntent, map[string]string{"file_sha256": strings.Repeat("ab", 32)}
		case i == 13:
			r.MessageIDs, r.LogicalIDs = nil, nil
			for j := range 2048 {
				r.MessageIDs = append(r.MessageIDs, fmt.Sprintf("m-%06d-%s", j, strings.Repeat("x", 100)))
				r.LogicalIDs = append(r.LogicalIDs, "sha256:"+BodyDigest([]byte{byte(j)}))
			}
		}
		recs = append(recs, r)
	}
	return recs
}

// whereNeedles find the final records and the intent of the file.
var whereNeedles = [][]byte{[]byte(`"final"`), []byte(strings.Repeat("ab", 32))}

func scanSeqs(t *testing.T, scan func(func(Record) error) error) []int64 {
	t.Helper()
	var seqs []int64
	if err := scan(func(r Record) error { seqs = append(seqs, r.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	return seqs
}

// A search of the log decodes the lines holding a needle and no other,
// in order, long lines too; Scan still reads every record.
func TestScanWhereReadsTheLinesHoldingANeedle(t *testing.T) {
	ctx := context.Background()
	s, err := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAll(ctx, whereLog()); err != nil {
		t.Fatal(err)
	}
	got := scanSeqs(t, func(fn func(Record) error) error { return ScanWhere(ctx, s, whereNeedles, fn) })
	if fmt.Sprint(got) != "[7 10 20 30]" {
		t.Fatalf("ScanWhere read seqs %v, want [7 10 20 30]", got)
	}
	raw, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	if long := len(bytes.SplitAfter(raw, []byte("\n"))[12]); long <= scanBuffer {
		t.Fatalf("record 13 is %d bytes, not longer than the reader's buffer (%d)", long, scanBuffer)
	}
	if all := scanSeqs(t, func(fn func(Record) error) error { return s.Scan(ctx, fn) }); len(all) != 30 || all[12] != 13 {
		t.Fatalf("Scan read %d records (%v), want all 30, the long one among them", len(all), all)
	}
}

// A line the search skips is not decoded, so damage there goes unseen
// (Verify reads every line); damage on a line it reads, and a torn last
// line, are reported as Scan reports them.
func TestScanWhereReportsDamageOnlyWhereItReads(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAll(ctx, whereLog()); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	write := func(lines [][]byte) {
		t.Helper()
		if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	damaged := append([][]byte{}, lines...)
	damaged[2] = []byte("{\"seq\":3,\n") // no needle: skipped
	write(damaged)
	if got := scanSeqs(t, func(fn func(Record) error) error { return ScanWhere(ctx, s, whereNeedles, fn) }); fmt.Sprint(got) != "[7 10 20 30]" {
		t.Fatalf("with line 3 damaged, ScanWhere read %v", got)
	}
	damaged[9] = []byte("{\"outcome\":\"final\",\n") // a needle: read, refused
	write(damaged)
	var ce *CorruptError
	if err := ScanWhere(ctx, s, whereNeedles, func(Record) error { return nil }); !errors.As(err, &ce) || ce.Line != 10 || ce.Partial {
		t.Fatalf("with line 10 damaged: %v, want it named unreadable", err)
	}
	torn := append([][]byte{}, lines[:29]...)
	torn = append(torn, lines[29][:len(lines[29])/2])
	write(torn)
	if err := ScanWhere(ctx, s, whereNeedles, func(Record) error { return nil }); !errors.As(err, &ce) || !ce.Partial || ce.Line != 30 {
		t.Fatalf("with the last line torn: %v, want a partial record at line 30", err)
	}
}
