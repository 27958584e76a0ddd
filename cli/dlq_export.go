package cli

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

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/sources/dlqfile"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// exportFlags are dlq export's flags.
type exportFlags struct {
	filter, group, output, vhost string
	limit                        int
	asJSON, allowRisk, force     bool
}

const exportLong = `Write the dead letters of QUEUE to a file, without harm: the queue is read
in order as dlq ls reads it and every message goes back (docs/ARCHITECTURE.md
§4.14). The file is JSON Lines: a header line (format, version, broker, vhost,
queue, time, count, warren's version), then one line per message with every
property, every header with its AMQP type (x-death included), the body in
base64 and its sha256, the logical ID and the failure group. A name ending in
.gz is written gzipped; - writes to stdout. The file appears whole or not at
all: it is written beside its name and put in place once complete. An export
never replaces a file (an earlier export may be the only copy of messages
purged since) unless --force is given.

An export takes every message the queue holds ready when it starts. When the
queue then holds ready messages the file does not (new dead letters, or
messages another client held and gave back, such as an export or a browse
that had just ended), or messages another client holds unacknowledged (a
consumer, or a browse such as warren's DLQ screen), it says how many and
exits 1, the file written: a purge now would take messages the file does not
hold, and deleting the queue the held ones too. Consumers are warned of.
--json counts them (unread, held, consumers). --limit N takes the first N: a
queue that held more when the export started exits 1 too, saying how many the
export did not read (past_limit in --json).`

func newDlqExportCmd(a *App) *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use: "export QUEUE --output FILE|-", Short: "Save a DLQ's messages to a file (JSON Lines, typed headers, bodies), changing nothing", Long: exportLong,
		Args: oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runDlqExport(cmd.Context(), args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.output, "output", "", "the file to write (required; .gz: gzipped; -: stdout)")
	fl.StringVar(&f.filter, "filter", "", `only messages matching EXPR, e.g. 'reason == "rejected"'`)
	fl.StringVar(&f.group, "group", "", "only the failure group ID (as dlq groups lists it)")
	fl.IntVar(&f.limit, "limit", 0, "read at most the first N messages (0: every message the queue holds when it starts)")
	fl.BoolVar(&f.asJSON, "json", false, "print a JSON summary on stdout (with a file)")
	fl.StringVar(&f.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "read a quorum DLQ whose delivery limit a browse counts against (see the refusal)")
	fl.BoolVar(&f.force, "force", false, "replace FILE if it exists")
	return cmd
}

// exportJSON is the `dlq export --json` summary.
type exportJSON struct {
	Vhost  string `json:"vhost"`
	Queue  string `json:"queue"`
	Output string `json:"output"`
	Read   int    `json:"read"`
	Count  int    `json:"count"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Unread counts the messages ready in the queue once the export had
	// read what it would that it did not read (new dead letters, messages
	// another client gave back, or past --limit); Consumers, the queue's
	// consumers; Held, the messages other clients held unacknowledged
	// when it started, which no reader sees.
	Unread    int `json:"unread"`
	Consumers int `json:"consumers"`
	Held      int `json:"held"`
	// PastLimit counts the messages the queue held, once --limit cut the
	// export short, that it did not read (Unread then); 0 when the queue
	// held no more than --limit when the export started.
	PastLimit int `json:"past_limit"`
	// Operation is the audit log's record of the export; "" when the
	// log could not be written (said on stderr).
	Operation string `json:"operation"`
}

func (a *App) runDlqExport(ctx context.Context, queue string, f exportFlags) error {
	switch {
	case f.output == "":
		return app.Usage(errors.New("--output FILE is required (- writes to stdout)"))
	case f.limit < 0:
		return app.Usage(fmt.Errorf("--limit %d: want 0 (every message) or more", f.limit))
	case f.asJSON && f.output == "-":
		return app.Usage(errors.New("--json prints a summary beside a file: with --output - the file is stdout"))
	}
	if err := checkOutput(f.output, f.force); err != nil {
		return fmt.Errorf("%w; nothing was read from %s", err, sanitize.Text(queue))
	}
	c, err := a.Factory().Config()
	if err != nil {
		return err
	}
	filterText := f.filter
	if f.group != "" {
		if filterText, err = domain.GroupFilter(f.filter, f.group); err != nil {
			return app.Usage(err)
		}
	}
	var filter ops.Filter
	if filterText != "" {
		flt, err := domain.CompileFilter(filterText)
		if err != nil {
			return app.Usage(err)
		}
		filter = flt
	}
	o, err := a.Factory().Ops()
	if err != nil {
		return err
	}
	defer o.Close()
	defer bulkMemory()()
	ref := domain.QueueRef{Vhost: vhostOf(c, f.vhost), Name: queue}

	// A file is written where it will be, beside its name: the header's
	// place is kept at the start (it counts the messages, known at the
	// end) and written over once the lines are in, so the lines are
	// written once. Gzip and stdout cannot be written over: their lines go
	// to a scratch file first, and follow the header.
	inPlace := f.output != "-" && !dlqfile.Gzipped(f.output)
	dir, pattern := os.TempDir(), ".warren-export-*"
	if f.output != "-" {
		dir = filepath.Dir(f.output)
	}
	if inPlace {
		pattern = "." + filepath.Base(f.output) + ".*"
	}
	lines, err := os.CreateTemp(dir, pattern)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the name was ours, not the operator's
		}
		err = fmt.Errorf("cannot write a file in %s (%w): nothing was read from %s", sanitize.Text(dir), err, sanitize.Text(queue))
		if errors.Is(err, fs.ErrNotExist) {
			return app.Usage(err) // a directory the operator named that is not there
		}
		return err
	}
	kept := false // the export was kept aside: a file appeared at its name
	defer func() {
		if !kept {
			os.Remove(lines.Name()) // gone once in place
		}
	}()
	defer lines.Close()
	header := func(t *ops.Target, count int, at time.Time) dlqfile.Header {
		return dlqfile.Header{Broker: "RabbitMQ " + t.Info.BrokerVersion, Cluster: t.Cluster, Vhost: ref.Vhost, Queue: ref.Name,
			ExportedAt: at, Count: count, Filter: filterText, Warren: app.Version()}
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
	begin := func(t *ops.Target) error {
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
	tty := IsTerminal(a.Err)
	var writeErr error
	res, err := o.Export(ctx, ops.ExportScope{Queue: ref, Filter: filter, Limit: f.limit, AllowRisk: f.allowRisk, Begin: begin},
		func(d domain.DeadLetter) error {
			select {
			case letters <- d:
				return nil
			case writeErr = <-written:
				return fmt.Errorf("writing the file: %w", writeErr)
			}
		},
		func(read int) {
			if tty {
				fmt.Fprintf(a.Err, "\rexport: %d read\033[K", read)
			}
		})
	if tty {
		fmt.Fprintln(a.Err)
	}
	close(letters)
	if writeErr == nil {
		writeErr = <-written
	}
	if err == nil && writeErr != nil {
		err = fmt.Errorf("writing the file: %w", writeErr)
	}
	if err != nil {
		return exitFor(fmt.Errorf("export of %s: %w; nothing was written to %s, and nothing was taken from %s", sanitize.Text(queue), err, sanitize.Text(f.output), sanitize.Text(queue)))
	}
	h := header(res.Target, res.Matched, o.Now().UTC())
	var sum string
	var size int64
	if inPlace {
		sum, size, err = finishInPlace(f.output, h, lines, reserved, f.force)
	} else {
		sum, size, err = a.writeExport(f.output, h, lines, f.force)
	}
	if err != nil {
		kept = errors.Is(err, errAppeared)
		return err
	}
	// The file is whole: the audit log says who took it. A log that
	// cannot be written takes nothing from the file, which is said.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	opID, aerr := o.RecordExport(actx, ops.ExportRecord{Queue: ref, Output: f.output, SHA256: sum, ExportID: h.ID(),
		Read: res.Read, Count: res.Matched, Bytes: size, Filter: filterText})
	cancel()
	if f.asJSON {
		err = writeJSON(a.Out, exportJSON{Vhost: ref.Vhost, Queue: ref.Name, Output: f.output, Read: res.Read, Count: res.Matched, Bytes: size, SHA256: sum,
			Unread: res.Unread, Consumers: res.Consumers, Held: res.Held, PastLimit: res.PastLimit, Operation: opID})
	} else if f.output != "-" {
		audited := "; audit operation " + opID
		if aerr != nil {
			audited = ""
		}
		fmt.Fprintf(a.Out, "exported %d of the %s read from %s to %s (%d bytes, sha256 %s); the queue keeps them all%s\n",
			res.Matched, format.Messages(res.Read), sanitize.Text(queue), sanitize.Text(f.output), size, sum, audited)
	}
	if aerr != nil {
		fmt.Fprintf(a.Err, "warning: the export is complete but not in the audit log: %s\n", sanitize.Message(aerr.Error()))
	}
	warnings, left := exportLeft(queue, f.limit, res)
	if none := emptySelection(queue, f, res); none != "" {
		// A mistyped group or filter gives a file of nothing: `export &&
		// purge` must not go on to purge the queue it was to keep.
		warnings, left = append([]string{none}, warnings...), app.Quiet(app.ExitFailure)
	}
	for _, w := range warnings {
		fmt.Fprintln(a.Err, "warning: "+w)
	}
	if err != nil {
		return err
	}
	return left
}

// emptySelection says that --filter or --group chose none of the
// messages read; "" when it chose some, or none was asked for.
func emptySelection(queue string, f exportFlags, res ops.ExportResult) string {
	if res.Matched > 0 || res.Read == 0 || (f.filter == "" && f.group == "") {
		return ""
	}
	what := "--filter " + f.filter
	if f.group != "" {
		what = "--group " + f.group
		if f.filter != "" {
			what += " with --filter " + f.filter
		}
	}
	return fmt.Sprintf("%s chose none of the %s read from %s: the file holds no message", sanitize.Text(what), format.Messages(res.Read), sanitize.Text(queue))
}

// exportLeft says what the queue held, once the export had read every
// message it held at the start (or its --limit), that is not in the
// file: an operator keeping a copy before a purge must not take the
// file for the whole queue. Messages the queue holds that the file does
// not exit 1 (the file is whole for what it read, but a purge now would
// take the ready ones, and deleting the queue the held ones too, so
// `export && purge` stops there); consumers that hold nothing are only
// warned of. An export whose --limit the queue exceeded when it started
// left the rest out: said, and exit 1 as well. With a limit the queue
// did not exceed, nothing is said.
func exportLeft(queue string, limit int, res ops.ExportResult) ([]string, error) {
	var out []string
	var err error
	q := sanitize.Text(queue)
	switch {
	case res.PastLimit > 0:
		// Unread counts the same messages: the limit ended the read.
		n := res.PastLimit
		were, are := "were", "are"
		if n == 1 {
			were, are = "was", "is"
		}
		out = append(out, fmt.Sprintf("--limit %d reached: %d more in %s %s not read and %s not in the file; export without --limit to take them",
			limit, n, q, were, are))
		err = app.Quiet(app.ExitFailure)
	case limit > 0:
		return nil, nil
	case res.Unread > 0:
		n := res.Unread
		verb := "are"
		if n == 1 {
			verb = "is"
		}
		out = append(out, fmt.Sprintf("%s %s in %s and not in the file: ready after the export started (%s); export again to take them",
			format.Messages(n), verb, q, domain.ReadyAfterStart))
		err = app.Quiet(app.ExitFailure)
	}
	if n := res.Held; n > 0 {
		out = append(out, fmt.Sprintf("%s; they are in %s and not in the file: export again once it has given them back", domain.HeldNote(n), q))
		err = app.Quiet(app.ExitFailure)
	}
	if n := res.Consumers; n > 0 {
		out = append(out, fmt.Sprintf("%s has %s: messages a consumer holds unacknowledged are not in the file", q, format.Plural(n, "consumer")))
	}
	return out, err
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
func (a *App) writeExport(output string, h dlqfile.Header, scratch *os.File, force bool) (_ string, _ int64, err error) {
	if _, err := scratch.Seek(0, io.SeekStart); err != nil {
		return "", 0, err
	}
	var (
		dst  io.Writer = a.Out
		file *os.File
	)
	if output != "-" {
		if file, err = os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".*"); err != nil {
			return "", 0, fmt.Errorf("write %s: %w", output, err)
		}
		defer func() {
			if !errors.Is(err, errAppeared) {
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

// checkOutput refuses, before anything is read, an output that is a
// directory, or a file that exists when force is not given: an earlier
// export there may be the only copy of messages purged since.
func checkOutput(output string, force bool) error {
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
		return app.Usage(fmt.Errorf("--output %s is a directory: name the file to write", sanitize.Text(output)))
	case !force:
		return app.Refused(fmt.Errorf("%s already exists and an export does not replace a file: pass --force to replace it, or --output another name", sanitize.Text(output)))
	}
	return nil
}

// errAppeared is a file put at the output's name while the export ran.
var errAppeared = errors.New("appeared while the export ran")

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

func (e *appearedError) Error() string { return errAppeared.Error() }
func (e *appearedError) Unwrap() error { return errAppeared }

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
		return app.Refused(fmt.Errorf("%s %w and an export does not replace a file: the export is complete in %s", sanitize.Text(output), errAppeared, sanitize.Text(keep)))
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
