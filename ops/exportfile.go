package ops

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlqfile"
	"github.com/warrenops/warren/text/sanitize"
)

// An export into a file (docs/ARCHITECTURE.md §4.14), as `dlq export`
// and the DLQ screen's E write it: the file appears whole or not at all,
// never over a file already there unless forced, and the audit log says
// who took which dead letters off the broker.

var (
	// ErrOutputExists: a file is at the output's name, and an export
	// replaces none unless forced (an earlier export there may be the
	// only copy of messages purged since).
	ErrOutputExists = errors.New("already exists and an export does not replace a file")
	// ErrOutputIsDir: the output names a directory.
	ErrOutputIsDir = errors.New("is a directory: name the file to write")
	// ErrOutputNotAFile: the output names a device, a pipe, a socket or
	// a symbolic link, which an export would replace with a file of its
	// own, even with --force: it writes beside the name and renames.
	ErrOutputNotAFile = errors.New("is not a regular file (a device, a pipe, a socket or a symbolic link), which an export would replace: name a regular file, or write to standard output (--output -) and redirect it")
	// ErrOutputAppeared: a file was put at the output's name while the
	// export ran; the export is kept beside it, complete, and named.
	ErrOutputAppeared = errors.New("appeared while the export ran")
)

// FileExport is an export into a file.
type FileExport struct {
	ExportScope
	// Output is the file's path; "-" writes to Stdout. A name ending in
	// .gz is written gzipped.
	Output string
	Stdout io.Writer
	// Force replaces a file at Output.
	Force bool
	// FilterText is the filter as the header and the audit record name
	// it; Version is warren's, for the header.
	FilterText, Version string
}

// FileExportResult is what an export read and wrote.
type FileExportResult struct {
	ExportResult
	Header dlqfile.Header
	SHA256 string
	Bytes  int64
	// Operation is the audit log's record of the export; "" when the log
	// could not be written, AuditErr saying why: the file is complete
	// all the same.
	Operation string
	AuditErr  error
}

// CheckOutput refuses, before anything is read, an output that is a
// directory (ErrOutputIsDir), anything but a regular file
// (ErrOutputNotAFile), or a file that exists when force is not given
// (ErrOutputExists).
func CheckOutput(output string, force bool) error {
	if output == "-" {
		return nil
	}
	fi, err := os.Lstat(output)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", sanitize.Text(output), err)
	case fi.IsDir():
		return fmt.Errorf("%s %w", sanitize.Text(output), ErrOutputIsDir)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s %w", sanitize.Text(output), ErrOutputNotAFile)
	case !force:
		return fmt.Errorf("%s %w", sanitize.Text(output), ErrOutputExists)
	}
	return nil
}

// ExportFile reads f's queue as Export does and writes what it takes to
// f.Output, then records the export in the audit log. Nothing is written
// at f.Output unless the whole file is; progress, when set, is told how
// many were read after every page.
func (o *Ops) ExportFile(ctx context.Context, f FileExport, progress func(read int)) (FileExportResult, error) {
	queue := f.Queue.Name
	if err := CheckOutput(f.Output, f.Force); err != nil {
		return FileExportResult{}, fmt.Errorf("%w; nothing was read from %s", err, sanitize.Text(queue))
	}
	// A file is written where it will be, beside its name: the header's
	// place is kept at the start (it counts the messages, known at the
	// end) and written over once the lines are in, so the lines are
	// written once. Gzip and stdout cannot be written over: their lines go
	// to a scratch file first, and follow the header.
	inPlace := f.Output != "-" && !dlqfile.Gzipped(f.Output)
	dir, pattern := os.TempDir(), ".warren-export-*"
	if f.Output != "-" {
		dir = filepath.Dir(f.Output)
	}
	if inPlace {
		pattern = "." + filepath.Base(f.Output) + ".*"
	}
	lines, err := os.CreateTemp(dir, pattern)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the name was ours, not the operator's
		}
		return FileExportResult{}, fmt.Errorf("cannot write a file in %s (%w): nothing was read from %s", sanitize.Text(dir), err, sanitize.Text(queue))
	}
	kept := false // the export was kept aside: a file appeared at its name
	defer func() {
		if !kept {
			os.Remove(lines.Name()) // gone once in place
		}
	}()
	defer lines.Close()
	header := func(t *Target, count int, at time.Time) dlqfile.Header {
		return dlqfile.Header{Broker: "RabbitMQ " + t.Info.BrokerVersion, Cluster: t.Cluster, Vhost: f.Queue.Vhost, Queue: queue,
			ExportedAt: at, Count: count, Filter: f.FilterText, Warren: f.Version}
	}
	// Lines are encoded and written on a goroutine of their own, while
	// the queue is read.
	var out io.Writer = lines // a scratch file is never synced
	if inPlace {
		out = dlqfile.WriteBehind(lines)
	}
	w := bufio.NewWriterSize(out, 1<<20)
	enc := dlqfile.NewEncoder(w)
	reserved := 0 // the header's place, newline included
	scope := f.ExportScope
	scope.Begin = func(t *Target) error {
		if !inPlace {
			return nil
		}
		// As long as the longest header of this queue: the largest count
		// and the longest time. Blank until written over, so a file left
		// by a killed export is no export.
		widest, err := headerLine(header(t, math.MaxInt, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)))
		if err != nil {
			return err
		}
		reserved = len(widest)
		_, err = w.Write(append(bytes.Repeat([]byte{' '}, reserved-1), '\n'))
		return err
	}
	letters := make(chan domain.DeadLetter, 1024)
	written := make(chan error, 1)
	go func() {
		var werr error
		for d := range letters {
			if werr != nil {
				continue
			}
			werr = enc.Letter(d)
		}
		if werr == nil {
			werr = w.Flush()
		}
		written <- werr
	}()
	var writeErr error
	res, err := o.Export(ctx, scope,
		func(d domain.DeadLetter) error {
			select {
			case letters <- d:
				return nil
			case writeErr = <-written:
				return fmt.Errorf("writing the file: %w", writeErr)
			}
		}, progress)
	close(letters)
	if writeErr == nil {
		writeErr = <-written
	}
	if err == nil && writeErr != nil {
		err = fmt.Errorf("writing the file: %w", writeErr)
	}
	fr := FileExportResult{ExportResult: res}
	if err != nil {
		return fr, fmt.Errorf("export of %s: %w; nothing was written to %s, and nothing was taken from %s", sanitize.Text(queue), err, sanitize.Text(f.Output), sanitize.Text(queue))
	}
	fr.Header = header(res.Target, res.Matched, o.Now().UTC())
	if inPlace {
		fr.SHA256, fr.Bytes, err = finishInPlace(f.Output, fr.Header, lines, reserved, f.Force)
	} else {
		fr.SHA256, fr.Bytes, err = writeExport(f.Output, f.Stdout, fr.Header, lines, f.Force)
	}
	if err != nil {
		kept = errors.Is(err, ErrOutputAppeared)
		return fr, err
	}
	// The file is whole: the audit log says who took it. A log that
	// cannot be written takes nothing from the file.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	fr.Operation, fr.AuditErr = o.RecordExport(actx, ExportRecord{Queue: f.Queue, Output: f.Output, SHA256: fr.SHA256, ExportID: fr.Header.ID(),
		Read: res.Read, Count: res.Matched, Bytes: fr.Bytes, Filter: f.FilterText})
	cancel()
	return fr, nil
}

// headerLine is h as the file's first line.
func headerLine(h dlqfile.Header) ([]byte, error) {
	var b bytes.Buffer
	err := dlqfile.NewEncoder(&b).Header(h)
	return b.Bytes(), err
}

// finishInPlace writes h over the blank place kept for it at the start
// of file, then syncs the file and puts it at output (replacing a file
// there only with force). It returns the file's sha256 and size.
func finishInPlace(output string, h dlqfile.Header, file *os.File, reserved int, force bool) (string, int64, error) {
	line, err := headerLine(h)
	if err == nil && len(line) > reserved {
		err = fmt.Errorf("its header (%d bytes) is longer than the place kept for it (%d)", len(line), reserved)
	}
	if err == nil {
		// JSON allows the blanks left before the newline.
		line = append(append(line[:len(line)-1], bytes.Repeat([]byte{' '}, reserved-len(line))...), '\n')
		_, err = file.WriteAt(line, 0)
	}
	// The sync and the hash go at once: the one waits on the disk, the
	// other reads the file back from memory.
	digest := sha256.New()
	var size int64
	if err == nil {
		synced := make(chan error, 1)
		go func() { synced <- file.Sync() }()
		size, err = io.Copy(digest, io.NewSectionReader(file, 0, math.MaxInt64))
		if serr := <-synced; err == nil {
			err = serr
		}
	}
	if err == nil {
		err = file.Close()
	}
	if err == nil {
		err = place(file.Name(), output, force)
	}
	if err != nil {
		return "", 0, writeError(output, err)
	}
	return hex.EncodeToString(digest.Sum(nil)), size, nil
}

// writeExport writes the header and the scratch file's lines to output
// (stdout for -): gzipped when its name ends in .gz, beside its name and
// put in place once whole (replacing a file there only with force). It
// returns the file's sha256 and size.
func writeExport(output string, stdout io.Writer, h dlqfile.Header, scratch *os.File, force bool) (_ string, _ int64, err error) {
	if _, err := scratch.Seek(0, io.SeekStart); err != nil {
		return "", 0, err
	}
	var (
		dst  io.Writer = stdout
		file *os.File
	)
	if output != "-" {
		if file, err = os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".*"); err != nil {
			return "", 0, fmt.Errorf("write %s: %w", output, err)
		}
		defer func() {
			if !errors.Is(err, ErrOutputAppeared) {
				os.Remove(file.Name()) // gone once in place
			}
		}()
		defer file.Close()
		dst = dlqfile.WriteBehind(file)
	}
	digest := sha256.New()
	counted := &countWriter{w: io.MultiWriter(dst, digest)}
	var w io.Writer = counted
	var gz *gzip.Writer
	if dlqfile.Gzipped(output) {
		gz = gzip.NewWriter(counted)
		w = gz
	}
	if err := dlqfile.NewEncoder(w).Header(h); err != nil {
		return "", 0, fmt.Errorf("write %s: %w", output, err)
	}
	if _, err := io.Copy(w, scratch); err != nil {
		return "", 0, fmt.Errorf("write %s: %w", output, err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return "", 0, fmt.Errorf("write %s: %w", output, err)
		}
	}
	if file != nil {
		if err := file.Sync(); err != nil {
			return "", 0, fmt.Errorf("write %s: %w", output, err)
		}
		if err := file.Close(); err != nil {
			return "", 0, fmt.Errorf("write %s: %w", output, err)
		}
		if err := place(file.Name(), output, force); err != nil {
			return "", 0, writeError(output, err)
		}
	}
	return hex.EncodeToString(digest.Sum(nil)), counted.n, nil
}

// place puts the complete file tmp at output, then syncs their
// directory, so the file is there whole or not at all. Without force it
// never replaces a file, even one created while the export ran: tmp is
// then left where it is, for writeError to name.
func place(tmp, output string, force bool) error {
	if force {
		if err := os.Rename(tmp, output); err != nil {
			return err
		}
		return audit.SyncDir(filepath.Dir(output))
	}
	err := os.Link(tmp, output) // fails on a name taken, unlike a rename
	switch {
	case errors.Is(err, fs.ErrExist):
		return &appearedError{kept: tmp}
	case err != nil:
		// A file system without hard links: the name is checked, then
		// taken, which leaves a moment between the two.
		if _, serr := os.Lstat(output); serr == nil {
			return &appearedError{kept: tmp}
		}
		if err := os.Rename(tmp, output); err != nil {
			return err
		}
	default:
		if err := os.Remove(tmp); err != nil {
			return err
		}
	}
	return audit.SyncDir(filepath.Dir(output))
}

// appearedError is a file put at the output's name while the export ran;
// kept is where the export itself is.
type appearedError struct{ kept string }

func (e *appearedError) Error() string { return ErrOutputAppeared.Error() }
func (e *appearedError) Unwrap() error { return ErrOutputAppeared }

// writeError says what went wrong writing output; the export's file,
// when it was kept because a file appeared at output, is named.
func writeError(output string, err error) error {
	var ae *appearedError
	if errors.As(err, &ae) {
		// The scratch name is ".NAME.RANDOM": kept as
		// "warren-export-RANDOM-NAME", its extension (.gz) kept.
		base := filepath.Base(output)
		random := strings.TrimPrefix(filepath.Base(ae.kept), "."+base+".")
		keep := filepath.Join(filepath.Dir(output), "warren-export-"+random+"-"+base)
		if rerr := os.Rename(ae.kept, keep); rerr != nil {
			keep = ae.kept
		}
		return fmt.Errorf("%s %w and an export does not replace a file: the export is complete in %s", sanitize.Text(output), ErrOutputAppeared, sanitize.Text(keep))
	}
	return fmt.Errorf("write %s: %w", sanitize.Text(output), err)
}

// countWriter counts what it writes.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
