package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/warrenops/warren/domain"
)

// Export formats.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// csvHeader is the first CSV row: the JSON field names, in Record order.
var csvHeader = []string{
	"seq", "time", "operator", "host", "context", "action", "operation",
	"vhost", "queue", "target", "message_ids", "logical_ids", "outcome",
	"detail", "prev_hash", "hash",
}

// Selection picks the records an export writes: those whose time lies in
// [Since, Until), a zero bound being open, and, when Operation is set,
// only that operation's records.
type Selection struct {
	Since, Until time.Time
	Operation    string
}

func (sel Selection) keeps(r Record) bool {
	switch {
	case !sel.Since.IsZero() && r.Time.Before(sel.Since),
		!sel.Until.IsZero() && !r.Time.Before(sel.Until),
		sel.Operation != "" && r.Operation != sel.Operation:
		return false
	}
	return true
}

// UnknownOperationError reports an export of an operation the store holds
// no record of (in the time window asked for, when one was).
type UnknownOperationError struct {
	Operation string
	Store     string // the store's description
	Windowed  bool   // --since or --until narrowed the search
}

func (e *UnknownOperationError) Error() string {
	s := fmt.Sprintf("no operation %s in the audit log (%s)", e.Operation, e.Store)
	if e.Windowed {
		s += " between the times given"
	}
	return s + "; `warren audit tail` lists the operations and their IDs"
}

// Export writes the records whose time lies in [since, until) to w and
// returns how many it wrote; a zero bound is open.
func Export(ctx context.Context, s Store, w io.Writer, format string, since, until time.Time) (int, error) {
	return ExportSelected(ctx, s, w, format, Selection{Since: since, Until: until})
}

// ExportSelected writes the records sel keeps to w and returns how many
// it wrote. JSONL lines are the stored form of each record. CSV has a
// header row, times in UTC RFC3339Nano, and message_ids, logical_ids and
// detail as JSON in their cells. Both are safe wherever they go (see
// "Safe exports" below), and both still verify against the records'
// hashes (VerifyExport). When sel names an operation and no record
// matches, nothing at all is written (not even the CSV header) and the
// error is an *UnknownOperationError.
func ExportSelected(ctx context.Context, s Store, w io.Writer, format string, sel Selection) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	var write func(Record) error
	var flush func() error
	head := func() error { return nil }
	switch format {
	case FormatJSONL:
		write = func(r Record) error {
			b, err := marshalLine(r)
			if err != nil {
				return err
			}
			_, err = bw.Write(append(escapeJSON(b), '\n'))
			return err
		}
		flush = bw.Flush
	case FormatCSV:
		cw := csv.NewWriter(bw)
		head = func() error { return cw.Write(csvHeader) }
		write = func(r Record) error { return cw.Write(csvRow(r)) }
		flush = func() error {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return err
			}
			return bw.Flush()
		}
	default:
		return 0, fmt.Errorf("audit: export format %q: want csv or jsonl", format)
	}
	n := 0
	err := s.Scan(ctx, func(r Record) error {
		if !sel.keeps(r) {
			return nil
		}
		if n == 0 {
			if err := head(); err != nil {
				return err
			}
		}
		n++
		return write(r)
	})
	if err != nil {
		// What was read before the damage is written out whole: after a
		// crash an export is what an operator keeps, and the error says
		// where it stops.
		if ferr := flush(); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return n, err
	}
	if n == 0 {
		if sel.Operation != "" {
			return 0, &UnknownOperationError{Operation: sel.Operation, Store: s.Describe(), Windowed: !sel.Since.IsZero() || !sel.Until.IsZero()}
		}
		if err := head(); err != nil {
			return 0, err
		}
	}
	return n, flush()
}

func csvRow(r Record) []string {
	r = r.normalized()
	return []string{
		strconv.FormatInt(r.Seq, 10), r.Time.Format(time.RFC3339Nano),
		csvText(r.Operator), csvText(r.Host), csvText(r.Context), csvText(r.Action), csvText(r.Operation),
		csvText(r.Vhost), csvText(r.Queue), csvText(r.Target),
		jsonCell(r.MessageIDs), jsonCell(r.LogicalIDs), csvText(r.Outcome),
		jsonCell(r.Detail), csvText(r.PrevHash), csvText(r.Hash),
	}
}

func jsonCell(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		// Only string slices and string maps come here; they always encode.
		panic(fmt.Sprintf("audit: encode cell: %v", err))
	}
	return string(escapeJSON(b))
}

// Safe exports. An export leaves the machine: it is opened in a
// spreadsheet, printed on a terminal, pasted into a ticket. Queue names,
// vhosts and details come from the broker and from whoever published, so
// neither format carries a character a terminal or an editor would obey
// or that reorders the text around it (unsafeRune), and no CSV cell
// starts the way a spreadsheet formula does.
//
//   - JSONL and the JSON cells of a CSV write each such character as a
//     JSON escape (\u001b, \u202e): still valid JSON, decoding to the
//     very string the record holds.
//   - A CSV text cell writes it as \xNN (below U+0080) or \uNNNN, and
//     doubles a backslash that comes before a backslash, x, u or such a
//     character, so no original text reads as an escape. A cell that then starts with =, +,
//     -, @ or ' gets a ' in front (OWASP's advice for CSV injection; tab
//     and carriage return are escaped already, and ' itself so that the
//     prefix comes off exactly). A spreadsheet shows the cell as text.
//
// ReadExport undoes both exactly, so VerifyExport recomputes each
// record's hash over the record as stored.

// unsafeRune reports a character an export never carries as it is: C0
// controls (ESC among them), DEL, C1 controls, the bidirectional marks,
// embeddings, overrides and isolates, the byte order mark, and the line
// and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	switch r {
	case 0x200e, 0x200f, 0x061c, 0xfeff, 0x2028, 0x2029:
		return true
	}
	return false
}

// escapeJSON writes every unsafe character of the JSON text b as its
// \uNNNN escape. Outside its strings JSON holds only ASCII, so every such
// character is inside a string, and the text decodes to the same value.
func escapeJSON(b []byte) []byte {
	if !bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x7f }) {
		return b // encoding/json escaped every C0 control already
	}
	out := make([]byte, 0, len(b)+32)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if unsafeRune(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// csvText is a CSV text cell for s (see "Safe exports").
func csvText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == '\\' && escapeFollows(s[i+1:]):
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	out := b.String()
	if out != "" && strings.IndexByte("=+-@'", out[0]) >= 0 {
		out = "'" + out
	}
	return out
}

// escapeFollows reports whether a backslash before rest must be doubled:
// rest starts with what would read, after a backslash, as an escape (x,
// u, another backslash) or with a character csvText escapes.
func escapeFollows(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return rest != "" && (r == '\\' || r == 'x' || r == 'u' || unsafeRune(r))
}

// readCSVText undoes csvText: one leading ' comes off, \\ is a backslash,
// \xNN and \uNNNN are the characters they name, and any other backslash
// is itself.
func readCSVText(s string) string {
	s = strings.TrimPrefix(s, "'")
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			b.WriteByte('\\')
			i += 2
			continue
		}
		if r, n, ok := hexEscape(s[i:]); ok {
			b.WriteRune(r)
			i += n
			continue
		}
		b.WriteByte('\\')
		i++
	}
	return b.String()
}

// hexEscape reads \xNN or \uNNNN at the start of s.
func hexEscape(s string) (rune, int, bool) {
	digits := 0
	switch {
	case strings.HasPrefix(s, `\x`):
		digits = 2
	case strings.HasPrefix(s, `\u`):
		digits = 4
	default:
		return 0, 0, false
	}
	if len(s) < 2+digits {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(s[2:2+digits], 16, 32)
	if err != nil {
		return 0, 0, false
	}
	return rune(v), 2 + digits, true
}

// ReadExport decodes an export written by Export and calls fn for each
// record in file order, stopping at fn's first error.
func ReadExport(r io.Reader, format string, fn func(Record) error) error {
	switch format {
	case FormatJSONL:
		return readJSONL(r, fn)
	case FormatCSV:
		return readCSV(r, fn)
	}
	return fmt.Errorf("audit: export format %q: want csv or jsonl", format)
}

func readJSONL(r io.Reader, fn func(Record) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) && len(b) == 0 {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		rec, perr := parseLine(bytes.TrimSuffix(b, []byte("\n")))
		if perr != nil {
			return fmt.Errorf("audit: jsonl line %d: %w", line, perr)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

func readCSV(r io.Reader, fn func(Record) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(csvHeader)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("audit: csv header: %w", err)
	}
	if !slices.Equal(head, csvHeader) {
		return fmt.Errorf("audit: csv header %q: want %q", head, csvHeader)
	}
	for row := 2; ; row++ {
		cells, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: csv: %w", err)
		}
		rec, err := parseRow(cells)
		if err != nil {
			return fmt.Errorf("audit: csv row %d: %w", row, err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

func parseRow(c []string) (Record, error) {
	t := readCSVText
	r := Record{
		Operator: t(c[2]), Host: t(c[3]), Context: t(c[4]), Action: t(c[5]), Operation: t(c[6]),
		Vhost: t(c[7]), Queue: t(c[8]), Target: t(c[9]), Outcome: t(c[12]), PrevHash: t(c[14]), Hash: t(c[15]),
	}
	var err error
	if r.Seq, err = strconv.ParseInt(c[0], 10, 64); err != nil {
		return Record{}, fmt.Errorf("seq: %w", err)
	}
	if r.Time, err = time.Parse(time.RFC3339Nano, c[1]); err != nil {
		return Record{}, fmt.Errorf("time: %w", err)
	}
	cells := []struct {
		name string
		dst  any
		src  string
	}{
		{"message_ids", &r.MessageIDs, c[10]},
		{"logical_ids", &r.LogicalIDs, c[11]},
		{"detail", &r.Detail, c[13]},
	}
	for _, cell := range cells {
		if err := json.Unmarshal([]byte(cell.src), cell.dst); err != nil {
			return Record{}, fmt.Errorf("%s: %w", cell.name, err)
		}
	}
	return r, nil
}

// VerifyExport checks an export written by Export as an excerpt of a
// chain: every record's hash must match its content and its prev_hash,
// seqs must rise, and where two records are consecutive in the chain
// (seq n and n+1) the second must link to the first. Records of one
// operation are seldom consecutive throughout, so the links between them
// cannot all be checked; each record's own hash still proves it is the
// record the chain holds. OK is false at the first failure, with
// BrokenSeq and Reason as Verify gives them; the error is for an export
// that cannot be read at all.
func VerifyExport(r io.Reader, format string) (domain.AuditResult, error) {
	var res domain.AuditResult
	var prev *Record
	err := ReadExport(r, format, func(rec Record) error {
		switch {
		case prev != nil && rec.Seq <= prev.Seq:
			res.BrokenSeq, res.Reason = rec.Seq, fmt.Sprintf("seq out of order: %d after %d", rec.Seq, prev.Seq)
		case prev != nil && rec.Seq == prev.Seq+1 && rec.PrevHash != prev.Hash:
			res.BrokenSeq, res.Reason = rec.Seq, fmt.Sprintf("broken link: prev_hash %q does not match the hash of seq %d", short(rec.PrevHash), prev.Seq)
		case rec.ComputeHash() != rec.Hash:
			res.BrokenSeq, res.Reason = rec.Seq, "hash mismatch: the record was altered after it was written"
		default:
			res.Records++
			res.LastSeq = rec.Seq
			prev = &rec
			return nil
		}
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return res, err
	}
	res.OK = res.BrokenSeq == 0
	return res, nil
}
