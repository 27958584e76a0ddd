package audit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExportRoundTripsTenThousandRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	want := writeChain(t, path, 10_000)
	s, _ := OpenFile(path)
	for _, format := range []string{FormatCSV, FormatJSONL} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := Export(context.Background(), s, &buf, format, time.Time{}, time.Time{})
			if err != nil || n != len(want) {
				t.Fatalf("Export = %d, %v; want %d records", n, err, len(want))
			}
			var got []Record
			if err := ReadExport(&buf, format, func(r Record) error {
				got = append(got, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, want)
		})
	}
}

func TestExportJSONLIsTheStoredForm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeChain(t, path, 50)
	s, _ := OpenFile(path)
	var buf bytes.Buffer
	if _, err := Export(context.Background(), s, &buf, FormatJSONL, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	stored := scanAll(t, s)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for i, r := range stored {
		line, _ := marshalLine(r)
		if lines[i] != string(line) {
			t.Fatalf("line %d differs from the stored record", i+1)
		}
	}
}

func TestExportFiltersByTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeChain(t, path, 300) // record i is at t0 + i minutes
	s, _ := OpenFile(path)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	tests := []struct {
		name           string
		since, until   time.Time
		first, records int64
	}{
		{"no bounds", time.Time{}, time.Time{}, 1, 300},
		{"since is inclusive", at(101), time.Time{}, 101, 200},
		{"until is exclusive", time.Time{}, at(11), 1, 10},
		{"a window", at(101), at(201), 101, 100},
		{"a window between records", at(101).Add(time.Second), at(102).Add(-time.Second), 0, 0},
		{"after the last record", at(301), time.Time{}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, format := range []string{FormatCSV, FormatJSONL} {
				var buf bytes.Buffer
				n, err := Export(context.Background(), s, &buf, format, tt.since, tt.until)
				if err != nil {
					t.Fatal(err)
				}
				var got []Record
				if err := ReadExport(&buf, format, func(r Record) error {
					got = append(got, r)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if int64(n) != tt.records || int64(len(got)) != tt.records {
					t.Fatalf("%s: exported %d, read %d, want %d", format, n, len(got), tt.records)
				}
				if len(got) > 0 && (got[0].Seq != tt.first || got[len(got)-1].Seq != tt.first+tt.records-1) {
					t.Fatalf("%s: seqs %d..%d, want from %d", format, got[0].Seq, got[len(got)-1].Seq, tt.first)
				}
			}
		})
	}
}

func TestReadExportRejectsDamagedInput(t *testing.T) {
	tests := []struct{ name, format, input, want string }{
		{"unknown format", "xml", "", "want csv or jsonl"},
		{"csv with another header", FormatCSV, "a,b\n", "header"},
		{"csv with a missing cell", FormatCSV, strings.Join(csvHeader, ",") + "\n1,2\n", "csv"},
		{"csv with a bad list cell", FormatCSV, strings.Join(csvHeader, ",") + "\n1,2024-01-01T00:00:00Z,,,,,,,,,[oops,[],x,{},,h\n", "row 2: message_ids"},
		{"jsonl with a bad line", FormatJSONL, "{}\nnot json\n", "jsonl line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ReadExport(strings.NewReader(tt.input), tt.format, func(Record) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadExport = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestExportRejectsUnknownFormat(t *testing.T) {
	s, _ := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if _, err := Export(context.Background(), s, &bytes.Buffer{}, "xml", time.Time{}, time.Time{}); err == nil {
		t.Fatal("Export accepted format xml")
	}
}

// interleaved writes a chain of n records whose operation alternates
// between op-a and op-b, as two operators' replays running at once do.
func interleaved(t *testing.T, n int) (Store, []Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, _ := OpenFile(path)
	var recs []Record
	for i := range n {
		r := sample(i)
		r.Operation = []string{"op-a", "op-b"}[i%3%2] // a, b, a, a, b, a, …
		sealed, err := s.Append(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, sealed)
	}
	return s, recs
}

func TestExportOfOneOperationHoldsItsRecordsOnlyAndStillVerifies(t *testing.T) {
	s, recs := interleaved(t, 30)
	var want []Record
	for _, r := range recs {
		if r.Operation == "op-a" {
			want = append(want, r)
		}
	}
	for _, format := range []string{FormatCSV, FormatJSONL} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := ExportSelected(context.Background(), s, &buf, format, Selection{Operation: "op-a"})
			if err != nil || n != len(want) {
				t.Fatalf("ExportSelected = %d, %v; want %d records", n, err, len(want))
			}
			raw := buf.String()
			var got []Record
			if err := ReadExport(strings.NewReader(raw), format, func(r Record) error {
				got = append(got, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, want)
			res, err := VerifyExport(strings.NewReader(raw), format)
			if err != nil || !res.OK || res.Records != len(want) {
				t.Fatalf("VerifyExport = %+v, %v; want ok with %d records", res, err, len(want))
			}
		})
	}
}

func TestVerifyExportFindsAnAlteredOrReorderedRecord(t *testing.T) {
	s, _ := interleaved(t, 30)
	var buf bytes.Buffer
	if _, err := ExportSelected(context.Background(), s, &buf, FormatJSONL, Selection{Operation: "op-a"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	// Seq 3 rewritten with its hash recomputed: it proves itself, but
	// seq 4, next in the chain and in the export, no longer links to it.
	rewritten, err := parseLine([]byte(strings.TrimSuffix(lines[1], "\n")))
	if err != nil || rewritten.Seq != 3 {
		t.Fatalf("line 2 is seq %d (%v), want 3", rewritten.Seq, err)
	}
	rewritten.MessageIDs = []string{"forged"}
	rewritten.Hash = rewritten.ComputeHash()
	forged, _ := marshalLine(rewritten)
	tests := []struct {
		name   string
		export string
		reason string
	}{
		{"an altered ID", strings.Replace(buf.String(), `"m-3"`, `"m-4"`, 1), "hash mismatch"},
		{"two records swapped", lines[1] + lines[0] + strings.Join(lines[2:], ""), "seq out of order"},
		{"a record rewritten with a fresh hash", lines[0] + string(forged) + "\n" + strings.Join(lines[2:], ""), "broken link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := VerifyExport(strings.NewReader(tt.export), FormatJSONL)
			if err != nil || res.OK || !strings.Contains(res.Reason, tt.reason) {
				t.Fatalf("VerifyExport = %+v, %v; want a break saying %q", res, err, tt.reason)
			}
		})
	}
}

func TestExportOfAnUnknownOperationWritesNothing(t *testing.T) {
	s, _ := interleaved(t, 5)
	for _, format := range []string{FormatCSV, FormatJSONL} {
		var buf bytes.Buffer
		n, err := ExportSelected(context.Background(), s, &buf, format, Selection{Operation: "op-z"})
		var unknown *UnknownOperationError
		if !errors.As(err, &unknown) || n != 0 || buf.Len() != 0 {
			t.Fatalf("%s: ExportSelected = %d, %v, wrote %q; want an UnknownOperationError and nothing written", format, n, err, buf.String())
		}
		if !strings.Contains(err.Error(), "no operation op-z in the audit log") {
			t.Errorf("error %q does not name the operation", err)
		}
	}
}

// After a crash tore the last line, an export still holds every whole
// record before it, and says where it stops.
func TestAnExportOfAFileWithATornTailHoldsEveryWholeRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	want := writeChain(t, path, 300)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(raw, `{"seq":301,"time":"20`...), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := OpenFile(path)
	var buf bytes.Buffer
	n, err := Export(context.Background(), s, &buf, FormatJSONL, time.Time{}, time.Time{})
	if err == nil {
		t.Fatal("the export of a torn file reported no damage")
	}
	if n != len(want) || !bytes.Equal(buf.Bytes(), raw) {
		t.Fatalf("exported %d records in %d bytes, want the %d whole ones in %d bytes", n, buf.Len(), len(want), len(raw))
	}
}
