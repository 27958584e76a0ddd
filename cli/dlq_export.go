package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
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
	if err := ops.CheckOutput(f.output, f.force); err != nil {
		return outputError(err, "; nothing was read from "+sanitize.Text(queue))
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
	tty := IsTerminal(a.Err)
	res, err := o.ExportFile(ctx, ops.FileExport{
		ExportScope: ops.ExportScope{Queue: ref, Filter: filter, Limit: f.limit, AllowRisk: f.allowRisk},
		Output:      f.output, Stdout: a.Out, Force: f.force, FilterText: filterText, Version: app.Version(),
	}, func(read int) {
		if tty {
			fmt.Fprintf(a.Err, "\rexport: %d read\033[K", read)
		}
	})
	if tty {
		fmt.Fprintln(a.Err)
	}
	if err != nil {
		return outputError(exitFor(err), "")
	}
	opID, aerr := res.Operation, res.AuditErr
	if f.asJSON {
		err = writeJSON(a.Out, exportJSON{Vhost: ref.Vhost, Queue: ref.Name, Output: f.output, Read: res.Read, Count: res.Matched, Bytes: res.Bytes, SHA256: res.SHA256,
			Unread: res.Unread, Consumers: res.Consumers, Held: res.Held, PastLimit: res.PastLimit, Operation: opID})
	} else if f.output != "-" {
		audited := "; audit operation " + opID
		if aerr != nil {
			audited = ""
		}
		fmt.Fprintf(a.Out, "exported %d of the %s read from %s to %s (%d bytes, sha256 %s); the queue keeps them all%s\n",
			res.Matched, format.Messages(res.Read), sanitize.Text(queue), sanitize.Text(f.output), res.Bytes, res.SHA256, audited)
	}
	if aerr != nil {
		fmt.Fprintf(a.Err, "warning: the export is complete but not in the audit log: %s\n", sanitize.Message(aerr.Error()))
	}
	warnings, left := exportLeft(queue, f.limit, res.ExportResult)
	if none := emptySelection(queue, f, res.ExportResult); none != "" {
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

// outputError gives an export's refusals of its output their exit codes
// and the flags that change them, tail after them: a file there is
// refused (3), a directory or a directory not there is bad usage (2).
func outputError(err error, tail string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ops.ErrOutputExists):
		return app.Refused(fmt.Errorf("%w: pass --force to replace it, or --output another name%s", err, tail))
	case errors.Is(err, ops.ErrOutputIsDir), errors.Is(err, ops.ErrOutputNotAFile):
		return app.Usage(fmt.Errorf("--output %w%s", err, tail))
	case errors.Is(err, fs.ErrNotExist):
		// A directory the operator named that is not there.
		return app.Usage(fmt.Errorf("%w%s", err, tail))
	case errors.Is(err, ops.ErrOutputAppeared):
		return app.Refused(fmt.Errorf("%w%s", err, tail))
	}
	if tail != "" {
		return fmt.Errorf("%w%s", err, tail)
	}
	return err
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
