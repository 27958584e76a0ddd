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
	"time"
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

// Export writes the records whose time lies in [since, until) to w and
// returns how many it wrote; a zero bound is open. JSONL lines are the
// stored form of each record. CSV has a header row, times in UTC
// RFC3339Nano, and message_ids, logical_ids and detail as JSON in their
// cells. Values are written as stored, not neutralised for spreadsheets,
// so that an export still verifies against its hashes.
func Export(ctx context.Context, s Store, w io.Writer, format string, since, until time.Time) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	var write func(Record) error
	var flush func() error
	switch format {
	case FormatJSONL:
		write = func(r Record) error {
			b, err := marshalLine(r)
			if err != nil {
				return err
			}
			_, err = bw.Write(append(b, '\n'))
			return err
		}
		flush = bw.Flush
	case FormatCSV:
		cw := csv.NewWriter(bw)
		if err := cw.Write(csvHeader); err != nil {
			return 0, err
		}
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
		if (!since.IsZero() && r.Time.Before(since)) || (!until.IsZero() && !r.Time.Before(until)) {
			return nil
		}
		n++
		return write(r)
	})
	if err != nil {
		return n, err
	}
	return n, flush()
}

func csvRow(r Record) []string {
	r = r.normalized()
	return []string{
		strconv.FormatInt(r.Seq, 10), r.Time.Format(time.RFC3339Nano),
		r.Operator, r.Host, r.Context, r.Action, r.Operation,
		r.Vhost, r.Queue, r.Target,
		jsonCell(r.MessageIDs), jsonCell(r.LogicalIDs), r.Outcome,
		jsonCell(r.Detail), r.PrevHash, r.Hash,
	}
}

func jsonCell(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		// Only string slices and string maps come here; they always encode.
		panic(fmt.Sprintf("audit: encode cell: %v", err))
	}
	return string(b)
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
	r := Record{
		Operator: c[2], Host: c[3], Context: c[4], Action: c[5], Operation: c[6],
		Vhost: c[7], Queue: c[8], Target: c[9], Outcome: c[12], PrevHash: c[14], Hash: c[15],
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
