package audit

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/warrenops/warren/domain"
)

// hostile is a record as a publisher who names queues can shape it: a
// leading formula, an escape sequence, a right-to-left override, a C1
// control, a DEL and backslashes that look like escapes.
func hostile() Record {
	return Record{
		Operator:   "'ana",
		Host:       "ops-1",
		Context:    "prod",
		Action:     "replay",
		Operation:  "op-1",
		Vhost:      "-/",
		Queue:      "=HYPERLINK(\"x\")\x1b[31m\u202eqld.sredro",
		Target:     `C:\x41\u0041\\ \q` + "\x7f\u0085",
		MessageIDs: []string{"m-1\x1b]0;title\x07", "@SUM(1)"},
		LogicalIDs: []string{"evt-1\u2066"},
		Outcome:    domain.OutcomeConfirmed,
		Detail:     map[string]string{"reason": "+cmd\u200f\r\nnext", "\u202dkey": "v"},
	}
}

// unsafeIn returns the first character of s an export must not carry
// as it is, or -1.
func unsafeIn(s string) rune {
	for _, r := range s {
		if r != '\n' && unsafeRune(r) {
			return r
		}
	}
	return -1
}

func TestExportEscapesControlAndBidiCharactersAndStillVerifies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, _ := OpenFile(path)
	ctx := context.Background()
	for range 2 {
		if _, err := s.Append(ctx, hostile()); err != nil {
			t.Fatal(err)
		}
	}
	stored := scanAll(t, s)
	for _, format := range []string{FormatCSV, FormatJSONL} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := Export(ctx, s, &buf, format, time.Time{}, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if r := unsafeIn(buf.String()); r >= 0 {
				t.Fatalf("the export carries U+%04X as it is:\n%q", r, buf.String())
			}
			res, err := VerifyExport(bytes.NewReader(buf.Bytes()), format)
			if err != nil || !res.OK || res.Records != len(stored) {
				t.Fatalf("VerifyExport = %+v, %v; want ok with %d records", res, err, len(stored))
			}
			var got []Record
			if err := ReadExport(bytes.NewReader(buf.Bytes()), format, func(r Record) error {
				got = append(got, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, stored)
		})
	}
}

func TestExportedJSONLIsValidJSONWithEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, _ := OpenFile(path)
	if _, err := s.Append(context.Background(), hostile()); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Export(context.Background(), s, &buf, FormatJSONL, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(buf.String(), "\n")
	for _, want := range []string{`\u001b[31m\u202eqld.sredro`, `\u007f\u0085`, `\u2066`, `"\u202dkey"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the line lacks %s: %s", want, line)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, line)
	}
	if m["queue"] != hostile().Queue {
		t.Errorf("queue decodes as %q, want %q", m["queue"], hostile().Queue)
	}
}

func TestExportedCSVCellsStartNoFormulaAndShowEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, _ := OpenFile(path)
	if _, err := s.Append(context.Background(), hostile()); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Export(context.Background(), s, &buf, FormatCSV, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("read %d rows (%v), want a header and one record", len(rows), err)
	}
	cell := map[string]string{}
	for i, name := range csvHeader {
		cell[name] = rows[1][i]
	}
	tests := []struct{ field, want string }{
		{"queue", `'=HYPERLINK("x")\x1b[31m\u202eqld.sredro`},
		{"operator", `''ana`},
		{"vhost", `'-/`},
		{"target", `C:\\x41\\u0041\\\ \q\x7f\u0085`},
		{"message_ids", `["m-1\u001b]0;title\u0007","@SUM(1)"]`},
		{"detail", `{"reason":"+cmd\u200f\r\nnext","\u202dkey":"v"}`},
		{"host", "ops-1"},
	}
	for _, tt := range tests {
		if cell[tt.field] != tt.want {
			t.Errorf("%s cell = %s, want %s", tt.field, cell[tt.field], tt.want)
		}
	}
	for name, c := range cell {
		if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			t.Errorf("%s cell %q starts like a formula", name, c)
		}
	}
}

func TestCSVTextCellsReadBackExactly(t *testing.T) {
	for _, s := range []string{
		"", "'", "''", "=1+2", "+", "-", "@", "\t=x", "\r", `\`, `\\`, `\x`, `\x4`, `\x41`, `\\x41`,
		`\u202e`, "\u202e", `a\`, `a\q`, "\x00\x1f\x7f\u0080\u009f", "ação ✓", "\ufeff", "x\u2028y",
	} {
		cell := csvText(s)
		if got := readCSVText(cell); got != s {
			t.Errorf("csvText(%q) = %q reads back as %q", s, cell, got)
		}
	}
}

// FuzzCSVText: any text comes back from its cell exactly, and no cell
// carries an unsafe character or starts like a formula.
func FuzzCSVText(f *testing.F) {
	for _, s := range []string{"=cmd|' /C calc'!A0", `\\x1b`, "\x1b[2J", "'", `\u`, "-\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = validUTF8(s) // records are normalized before export
		}
		cell := csvText(s)
		if got := readCSVText(cell); got != s {
			t.Fatalf("csvText(%q) = %q reads back as %q", s, cell, got)
		}
		if strings.ContainsFunc(cell, unsafeRune) {
			t.Fatalf("csvText(%q) = %q carries an unsafe character", s, cell)
		}
		if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
			t.Fatalf("csvText(%q) = %q starts like a formula", s, cell)
		}
	})
}
