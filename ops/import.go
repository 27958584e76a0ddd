package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlqfile"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// An import (docs/ARCHITECTURE.md §4.14) publishes an export file's
// messages as they were delivered, through the walk every operation
// takes: an intent record naming the file and its sha256, write-ahead
// records of each page's logical IDs, mandatory publishes with confirms,
// a stop at the first return or nack, a final record. The whole file is
// read and checked before anything is published: a file that is not an
// export, a line that does not parse, a body whose sha256 does not match
// refuse the import, naming the line.

// Import is the operation that publishes an export file.
const Import Action = actions.ActionImport

// importFile is what checking a file found.
type importFile struct {
	path   string
	sha256 string
	ident  fileIdent // the file as it was checked
	header dlqfile.Header
	count  int
	bytes  int64
	groups []actions.Group
	// export is the export that wrote the file, when the audit log
	// holds it: the intent names it.
	export *exportSeen
}

// fileIdent tells a file from itself changed: the kernel sets a file's
// change time at every write to it (and at every rename, link or mode
// change), so the file a path names has the same identity as before only
// if it is the same file, unchanged.
type fileIdent struct {
	dev, ino     uint64
	size         int64
	mtime, ctime syscall.Timespec
}

func identOf(fi os.FileInfo) fileIdent {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileIdent{size: fi.Size()}
	}
	return fileIdent{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// checkImport reads the whole file at path and decides each message's
// destination with req; nothing is published.
func checkImport(path string, req actions.Request) (*importFile, error) {
	if path == "-" {
		return nil, &actions.RequestError{Err: errors.New("an import reads a file, not its standard input (-): it checks the file whole before anything is published, then reads it again to publish it, and again to resume it; nothing was published: save the export to a file first (warren dlq export QUEUE --output FILE)")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &actions.RequestError{Err: fmt.Errorf("%w; nothing was published", err)}
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, &actions.RequestError{Err: err}
	}
	if !before.Mode().IsRegular() {
		return nil, &actions.RequestError{Err: fmt.Errorf("%s is not a regular file: an import reads its file twice, checked whole before anything is published, then published; save it to a file first", sanitize.Text(path))}
	}
	digest := sha256.New()
	src, err := dlqfile.NewCheck(io.TeeReader(f, digest))
	if err != nil {
		return nil, &actions.RequestError{Err: fmt.Errorf("%s: %w; nothing was published", sanitize.Text(path), err)}
	}
	defer src.Close()
	out := &importFile{path: path, header: src.Header()}
	groups := map[actions.Destination]*actions.Group{}
	for {
		letters, end, err := src.Next(context.Background(), 512)
		if err != nil {
			return nil, &actions.RequestError{Err: fmt.Errorf("%s: %w; nothing was published", sanitize.Text(path), err)}
		}
		for _, d := range letters {
			dest, skip, _ := req.Decide(d, nil)
			if skip != actions.Selected && req.To.KeepKey {
				return nil, &actions.RequestError{Err: fmt.Errorf("%s: message %s has no original routing key (no x-death or framework header names one), so --original-routing-key cannot route it; nothing was published: import with --routing-key K or --to QUEUE", sanitize.Text(path), sanitize.Text(d.LogicalID))}
			}
			if skip != actions.Selected {
				return nil, &actions.RequestError{Err: fmt.Errorf("%s: message %s has no destination; nothing was published", sanitize.Text(path), sanitize.Text(d.LogicalID))}
			}
			g := groups[dest]
			if g == nil {
				g = &actions.Group{Dest: dest}
				groups[dest] = g
			}
			g.Count++
			g.Bytes += int64(d.Size)
			out.count++
			out.bytes += int64(d.Size)
		}
		if end {
			break
		}
	}
	// The reader is done with the file: what it did not read (a gzip
	// stream's tail) goes into the digest too.
	if err := src.Close(); err != nil {
		return nil, err
	}
	if _, err := io.Copy(digest, f); err != nil {
		return nil, err
	}
	out.sha256 = hex.EncodeToString(digest.Sum(nil))
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if out.ident = identOf(after); out.ident != identOf(before) {
		return nil, &actions.RequestError{Err: fmt.Errorf("%s changed while it was being checked: nothing was published; import it again once nothing writes to it", sanitize.Text(path))}
	}
	for _, g := range groups {
		out.groups = append(out.groups, *g)
	}
	sort.Slice(out.groups, func(i, j int) bool { return out.groups[i].Dest.Target() < out.groups[j].Dest.Target() })
	if out.header.Count != out.count {
		return nil, &actions.RequestError{Err: fmt.Errorf("%s: the header counts %d messages and the file holds %d: a file cut short or joined; nothing was published", sanitize.Text(path), out.header.Count, out.count)}
	}
	return out, nil
}

// planImport checks s.File whole and the destinations, and plans the
// import into s.Queue's vhost.
func (o *Ops) planImport(ctx context.Context, s Scope) (*Plan, error) {
	if s.File == "" {
		return nil, &actions.RequestError{Err: errors.New("an import needs an export file")}
	}
	req := actions.Request{Action: actions.ActionImport, Vhost: s.Queue.Vhost, To: s.To, Rate: s.Rate, Now: o.c.Now()}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	// The broker connection opens while the file is checked: the check
	// is most of what an import adds before it publishes, and the
	// broker idles through it.
	dialed := make(chan dialResult, 1)
	go func() {
		conn, err := o.c.Dial(s.Queue.Vhost)
		dialed <- dialResult{conn, err}
	}()
	dial := sync.OnceValue(func() dialResult { return <-dialed })
	keep := false // the plan holds the connection for its run
	defer func() {
		if !keep { // closed once dialled, without waiting for it here
			go func() {
				if d := dial(); d.conn != nil {
					_ = d.conn.Close()
				}
			}()
		}
	}()
	file, err := checkImport(s.File, req)
	if err != nil {
		return nil, err
	}
	req.Queue = file.header.Queue
	hist, err := o.importHistory(ctx, s.Queue.Vhost, file.sha256, file.header.ID())
	if err != nil {
		return nil, err
	}
	resume, prior := hist.resume, hist.prior
	file.export = hist.export
	var leftOver string                // the warning on an unfinished import this one starts over from
	var superseded *actions.Resumption // that import, closed when this one runs
	if resume != nil && s.StartOver {
		leftOver = fmt.Sprintf("import %s of this file into vhost %s (started %s, %s recorded confirmed to %s) is not finished — interrupted, or still running elsewhere: running this one closes it as cancelled and publishes every message of the file again",
			resume.Op.ID, s.Queue.Vhost, resume.Started, format.Messages(resumeCount(resume.Confirmed)), resume.Request.To.Words())
		superseded, resume = resume, nil
	}
	if resume != nil {
		if want, got := resume.Request.To.String(), req.To.String(); want != got {
			return nil, &actions.RequestError{Err: fmt.Errorf("import %s of this file was interrupted publishing to %s, not %s: run it again with that destination to finish it (it skips what was confirmed), or add --start-over to publish the whole file to %s, leaving that import unfinished",
				resume.Op.ID, sanitize.Text(resume.Request.To.Words()), sanitize.Text(req.To.Words()), sanitize.Text(req.To.Words()))}
		}
		req = resume.Request
	}
	d := dial()
	conn := d.conn
	if file.count > 0 {
		if d.err != nil {
			return nil, d.err
		}
		if err := actions.CheckDestinations(conn, req, file.groups); err != nil {
			return nil, err
		}
	}
	// The plan's words are raw, as every plan's: each front end
	// sanitises what it shows.
	to := "to " + req.To.Words()
	if len(file.groups) == 1 {
		to = "to " + file.groups[0].Dest.String()
	}
	p := &Plan{
		Decided: true, Selected: file.count, Publish: file.count, Bytes: file.bytes, Rate: s.Rate,
		Summary: fmt.Sprintf("import %s (%s) from %s into vhost %s, %s (exported from %s in vhost %s, sha256 %s…)",
			format.Messages(file.count), format.Bytes(file.bytes), s.File, s.Queue.Vhost, to, file.header.Queue,
			file.header.Vhost, file.sha256[:12]),
	}
	inFile := ""
	if resume != nil {
		inFile = " in the file"
	}
	for _, g := range file.groups {
		p.Destinations = append(p.Destinations, Destination{Name: g.Dest.String(), Count: g.Count})
		p.Lines = append(p.Lines, fmt.Sprintf("→ %s: %s%s", g.Dest, format.Messages(g.Count), inFile))
	}
	if resume != nil {
		p.Operation, p.Twins, p.Unconfirmed = resume.Op.ID, resumeCount(resume.Confirmed), resumeCount(resume.Published)
		p.Publish = max(file.count-p.Twins, 0)
		started := "started " + resume.Started
		if resume.File != "" && resume.File != s.File {
			// Another file holding the same export (compressed or not):
			// its messages are told by their IDs and bodies.
			started += " from " + resume.File + ", the same export"
		}
		p.Summary = fmt.Sprintf("finish import %s of %s into vhost %s, %s (%s, interrupted): %s of the file's %d, recorded confirmed, are not published again; the other %d are (%d of them recorded without a confirm, so possibly twice)",
			resume.Op.ID, s.File, s.Queue.Vhost, to, started, format.Messages(p.Twins), file.count, p.Publish, p.Unconfirmed)
	}
	if e := file.export; e != nil {
		p.Warnings = append(p.Warnings, e.note())
	}
	if leftOver != "" {
		p.Warnings = append(p.Warnings, leftOver)
	}
	p.Warnings = append(p.Warnings, o.destinationWarnings(ctx, s.Queue.Vhost, file.groups)...)
	if prior != nil && resume == nil {
		confirmed := ""
		if prior.confirmed != "" {
			confirmed = ", " + prior.confirmed + " confirmed"
		}
		what := "this file was"
		if prior.file != "" {
			what = "this export was (from " + prior.file + ")"
		}
		again := fmt.Sprintf("%s imported into vhost %s before (operation %s, finished %s%s): importing it again publishes every message again",
			what, s.Queue.Vhost, prior.id, prior.finished.UTC().Format("2006-01-02 15:04:05Z"), confirmed)
		if !s.StartOver {
			// "Run the same command again" finishes an interrupted
			// import; after a finished one it would duplicate the file.
			if !s.DryRun {
				return nil, &actions.RequestError{Err: fmt.Errorf("%s; nothing was published: add --start-over to publish it again all the same", sanitize.Text(again))}
			}
			again += " (a run needs --start-over)"
		}
		p.Warnings = append(p.Warnings, again)
	}
	if s.Staging.RateAuto && file.count > 0 {
		if err := o.checkPace(ctx, importTarget(s.Queue.Vhost, file), file.groups); err != nil {
			return nil, err
		}
	}
	// The run publishes on the connection the plan checked the
	// destinations with (dialled again if it closed meanwhile).
	if conn != nil {
		keep = true
		p.close = conn.Close
	}
	p.run = func(ctx context.Context, progress func(Progress)) (Result, error) {
		if superseded != nil {
			if err := o.closeSuperseded(ctx, superseded); err != nil {
				return Result{}, err
			}
		}
		return o.runImport(ctx, s.Queue.Vhost, file, req, resume, s.Staging, conn, progress)
	}
	return p, nil
}

// closeSuperseded writes the final record of an unfinished import that
// --start-over replaces, as cancelled, counting what its records say was
// confirmed: the audit log then shows it ended, not open forever, and no
// import of the file takes it up again.
func (o *Ops) closeSuperseded(ctx context.Context, r *actions.Resumption) error {
	st, err := o.AuditStore()
	if err != nil {
		return err
	}
	op := r.Op
	if by := o.c.Operator; by != "" {
		op.Operator = by
	}
	rec := op.Final(map[string]int{domain.OutcomeConfirmed: resumeCount(r.Confirmed)})
	rec.Detail["cancelled"] = "true"
	rec.Detail["note"] = "left unfinished: the file was imported again from its start (--start-over)"
	if _, err := st.AppendAll(ctx, []audit.Record{rec}); err != nil {
		return fmt.Errorf("closing import %s, which --start-over replaces, in the audit log (%s): %w; nothing was published", r.Op.ID, st.Describe(), err)
	}
	return nil
}

// note says which export of the audit log wrote the file, and whether
// the file is still what it wrote.
func (e *exportSeen) note() string {
	by := e.operator
	if e.host != "" {
		by += " on " + e.host
	}
	what := fmt.Sprintf("export %s (%s, context %s, %s in vhost %s, %s, written to %s)", e.id, by, e.context, e.queue, e.vhost,
		e.at.UTC().Format("2006-01-02 15:04:05Z"), e.target)
	if e.same {
		return "this file is what " + what + " wrote, unchanged"
	}
	return "this file holds " + what + ", but its bytes differ from what that export wrote: compressed or decompressed since, or edited; the import publishes what the file holds now"
}

// dialResult is a connection being opened beside the check.
type dialResult struct {
	conn *amqp.Connection
	err  error
}

// importTarget is what pacing an import needs of its vhost: the pace
// reads the destinations' depth there.
func importTarget(vhost string, file *importFile) *Target {
	return &Target{Ref: domain.QueueRef{Vhost: vhost, Name: file.header.Queue}}
}

// priorImport is a finished import of the same file into the same vhost.
type priorImport struct {
	id        string
	finished  time.Time
	confirmed string // as its final record counts them
	// file is the other file it read, holding the same export
	// (compressed or not); "" when it read this one.
	file string
}

// importHistory is what the audit log says of a file about to be
// imported: the import of it to finish, or the one that finished, and
// the export that wrote it.
type importHistory struct {
	resume *actions.Resumption
	prior  *priorImport
	export *exportSeen
}

// exportSeen is the export that wrote a file, as its record in the
// audit log says; same is whether the file is the one it wrote, byte
// for byte (its sha256), and not only the same export (its header).
type exportSeen struct {
	id, operator, host, context, vhost, queue, target string
	at                                                time.Time
	same                                              bool
}

// importHistory reads the audit log once for the interrupted import of
// the file whose sha256 is sum into vhost, if it holds one: an intent
// with that file's sha256, or with its export's ID (export,
// dlqfile.Header.ID: the same export compressed or decompressed is
// another file), and no final record. Its records say what was
// confirmed, by each message's IDs and body, so a copy of the export
// skips the same messages. When the last import of the file into vhost
// finished instead, that one is prior. The same reading finds the export
// that wrote the file. Every import asks, so the log is searched for the
// kinds of line that can answer (a final record, an intent naming sum or
// export) and only those are decoded (audit.ScanWhere): a log of 223 MB
// took 0.7 s to decode whole.
func (o *Ops) importHistory(ctx context.Context, vhost, sum, export string) (importHistory, error) {
	var h importHistory
	st, err := o.AuditStore()
	if err != nil {
		return h, err
	}
	var id, queue string
	// The imports of this file, and what the final record of each that
	// finished says: an intent comes before its final record, so no
	// other operation's final record is kept.
	ours := map[string]*priorImport{}
	files := map[string]string{} // each import's file, as its intent names it
	err = audit.ScanWhere(ctx, st, [][]byte{[]byte(`"` + domain.OutcomeFinal + `"`), []byte(sum), []byte(export)}, func(r audit.Record) error {
		switch {
		case r.Outcome == domain.OutcomeFinal && r.Action == ActionExport &&
			(r.Detail["file_sha256"] == sum || r.Detail["export_id"] == export):
			h.export = &exportSeen{id: r.Operation, operator: r.Operator, host: r.Host, context: r.Context, vhost: r.Vhost, queue: r.Queue,
				target: r.Target, at: r.Time, same: r.Detail["file_sha256"] == sum}
		case r.Outcome == domain.OutcomeFinal:
			if _, ok := ours[r.Operation]; ok {
				ours[r.Operation] = &priorImport{id: r.Operation, finished: r.Time, confirmed: r.Detail[domain.OutcomeConfirmed], file: files[r.Operation]}
			}
		case r.Outcome == domain.OutcomeIntent && r.Action == actions.ActionImport && r.Vhost == vhost && o.ours(r) &&
			(r.Detail["file_sha256"] == sum || r.Detail["export_id"] == export):
			id, queue = r.Operation, r.Queue
			ours[id] = nil
			if r.Detail["file_sha256"] != sum {
				files[id] = r.Detail["file"]
			}
		}
		return nil
	})
	var torn *audit.CorruptError
	if errors.As(err, &torn) && torn.Partial {
		err = nil // a killed import's last line: resumableRecords decides
	}
	if err != nil {
		return h, fmt.Errorf("read the audit log (%s): %w", st.Describe(), err)
	}
	if id == "" {
		return h, nil
	}
	if prior := ours[id]; prior != nil {
		h.prior = prior
		return h, nil
	}
	records, err := o.resumableRecords(ctx, vhost, queue, id)
	if err != nil {
		return h, err
	}
	r, err := actions.ReadResumption(records, vhost, queue, id)
	if errors.Is(err, actions.ErrNothingToResume) {
		// Finished after all (a final record the search did not find, in
		// a log written by hand): nothing to finish, the file goes whole.
		return h, nil
	}
	h.resume = r
	return h, err
}

// runImport publishes the checked file, refusing one that changed since:
// not the same file, or written to (its identity, not its bytes, is
// compared: reading it whole again cost an import a tenth of its time).
// Each line is read as the check read it, and each body checked against
// its sha256 again as it is published.
func (o *Ops) runImport(ctx context.Context, vhost string, file *importFile, req actions.Request, resume *actions.Resumption, st Staging, conn *amqp.Connection, progress func(Progress)) (Result, error) {
	f, err := os.Open(file.path)
	if err != nil {
		return Result{}, err
	}
	if fi, err := f.Stat(); err != nil || identOf(fi) != file.ident {
		_ = f.Close()
		return Result{}, &actions.RequestError{Err: fmt.Errorf("%s changed since it was checked (sha256 %s): nothing was published; import it again", sanitize.Text(file.path), file.sha256)}
	}
	// Reading ahead starts now, while the connection opens.
	src, err := dlqfile.NewSource(f, f)
	if err != nil {
		_ = f.Close()
		return Result{}, err
	}
	defer src.Close()
	env, err := o.env()
	if err != nil {
		return Result{}, err
	}
	if conn == nil || conn.IsClosed() {
		if conn, err = o.c.Dial(vhost); err != nil {
			return Result{}, err
		}
	}
	blocks := watchBlocked(conn, o.c.Now)
	defer blocks.close()
	env.Conn = conn
	op := actions.Walk{Request: req, Expect: file.count, Limit: file.count, Groups: file.groups, Resume: resume,
		Detail: map[string]string{"file": file.path, "file_sha256": file.sha256, "export_id": file.header.ID()}}
	if file.export != nil {
		op.Detail["export_operation"] = file.export.id
	}
	var g *staged
	if st.RateAuto {
		// The consumers' pace, as a replay's (no canary: nothing marks
		// an imported copy).
		dests := make([]actions.Destination, len(file.groups))
		for i, gr := range file.groups {
			dests[i] = gr.Dest
		}
		if g, err = o.stage(ctx, importTarget(vhost, file), Staging{RateAuto: true}, "", "", dests); err != nil {
			return Result{}, err
		}
		defer g.Close()
		op.Gate, op.Staged = g.ramp, Staging{RateAuto: true}.detail()
	}
	report, stop := o.report(progress, g, blocks)
	unguard := blocks.guard(ctx)
	res, err := actions.RunWalk(ctx, src, op, env, report)
	unguard()
	stop()
	return result(res), err
}
