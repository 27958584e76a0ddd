package deadletters

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/progress"
	"github.com/warrenops/warren/ui/components/prompt"
)

// Export (E) writes the queue to a file as `dlq export` does
// (docs/ARCHITECTURE.md §4.14): the operator names the file, the screen
// gives back what it holds, so the export reads the queue whole and in
// order, and browses again once the file is written. It runs as the
// screen's operation: the keys wait while it reads, x cancels it, and
// its result stays under the table.

// actionExport is the export as the operation names it.
const actionExport ops.Action = "export"

// exportCheckedMsg is what the file's name was found to be, before
// anything is read: err when the export cannot write there.
type exportCheckedMsg struct {
	op   int64
	path string
	err  error
}

type exportProgressMsg struct {
	op   int64
	read int
	ch   <-chan int
}

type exportedMsg struct {
	op   int64
	path string
	res  ops.FileExportResult
	err  error
}

// exportName is the file an export of ref at now is offered: the queue's
// name with what a file name cannot hold replaced, and the time, gzipped.
func exportName(ref domain.QueueRef, now time.Time) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, ref.Name)
	name = strings.TrimLeft(name, ".") // not a hidden file
	if name == "" {
		name = "dlq"
	}
	return name + "-" + now.UTC().Format("20060102T150405Z") + ".jsonl.gz"
}

// startExport asks for the file to write.
func (m *Model) startExport() tea.Cmd {
	name := sanitize.Text(m.ref.Name)
	switch {
	case m.deps.Exporter == nil:
		return common.ReportError(errors.New("export is not available in this session"))
	case m.scan.running:
		return common.ReportError(fmt.Errorf("a scan of %s is running: press esc to stop it before exporting", name))
	case m.held.filterErr != nil:
		return common.ReportError(fmt.Errorf("the filter does not work (%v): fix or clear it before exporting", m.held.filterErr))
	case m.state == refused:
		return common.ReportError(fmt.Errorf("warren refused to read %s: %s", name, m.refusal.Reason))
	case m.loading:
		return common.ReportError(fmt.Errorf("a page of %s is loading; press E again once it is in", name))
	}
	m.op.askExport(m.exportQuestion(exportName(m.ref, m.opts.Now()), ""))
	return nil
}

// exportQuestion asks for the file; problem says why the last name was
// refused.
func (m *Model) exportQuestion(path, problem string) prompt.Question {
	what := "every message of " + sanitize.Text(m.ref.Name)
	if m.held.filter != nil {
		what += " matching " + sanitize.Text(m.held.filterSrc)
	}
	details := []string{
		"the queue is read in order and every message goes back: nothing is taken from it",
		"a name ending in .gz is gzipped; a file already there is never replaced",
	}
	if n := len(m.held.letters); n > 0 {
		details = append(details, fmt.Sprintf("this screen gives back the %s it holds first, and browses again once the file is written", format.Messages(n)))
	}
	return prompt.Question{
		Title:   "Export",
		Text:    fmt.Sprintf("Write %s to a file (JSON Lines: every property, typed headers, bodies):", what),
		Details: details,
		Warning: problem,
		Ask:     "File",
		Default: path,
	}
}

// askExport puts the export's question.
func (o *operation) askExport(q prompt.Question) {
	o.ask(askExportFile, q)
}

// checkExportCmd looks at the file's name, and at the directory it
// names, off the update loop.
func checkExportCmd(path string, op int64) tea.Cmd {
	return func() tea.Msg {
		// No shell reads the answer: ~ is the operator's home, as typed
		// at a prompt.
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				path = filepath.Join(home, rest)
			}
		}
		// The result names the file whole, wherever warren was started.
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		err := ops.CheckOutput(path, false)
		if err == nil {
			dir := filepath.Dir(path)
			switch fi, serr := os.Stat(dir); {
			case serr != nil:
				var pe *fs.PathError
				if errors.As(serr, &pe) {
					serr = pe.Err // the name is said once
				}
				err = fmt.Errorf("cannot write a file in %s: %w", sanitize.Text(dir), serr)
			case !fi.IsDir():
				err = fmt.Errorf("cannot write a file in %s: not a directory", sanitize.Text(dir))
			}
		}
		return exportCheckedMsg{op: op, path: path, err: err}
	}
}

// exportChecked starts the export once its file can be written, or asks
// again, saying why not.
func (m *Model) exportChecked(msg exportCheckedMsg) tea.Cmd {
	if msg.op != m.op.id || m.op.mode != planning || m.op.action != actionExport {
		return nil
	}
	if msg.err != nil {
		problem := msg.err.Error()
		if errors.Is(msg.err, ops.ErrOutputExists) {
			problem += ": name another file"
		}
		m.op.mode = normal
		m.op.askExport(m.exportQuestion(msg.path, sanitize.Message(problem)))
		return nil
	}
	// What the screen holds goes back first: the export reads the queue
	// whole, in order.
	s := m.lend()
	f := ops.FileExport{ExportScope: ops.ExportScope{Queue: m.ref, AllowRisk: m.allowRisk}, Output: msg.path}
	if m.held.filter != nil {
		f.Filter, f.FilterText = m.held.filter, m.held.filterSrc
	}
	return m.op.export(s, f, m.depth)
}

// export runs the export of f once s, the screen's session, is closed;
// total is what the queue held when the screen opened it, for the bar.
func (o *operation) export(s ops.Session, f ops.FileExport, total int) tea.Cmd {
	o.whole = true // the session was closed for it: browse again after
	o.mode = running
	o.id = nextID()
	o.result = ""
	o.progress = progress.New("Export to "+sanitize.Text(f.Output)+" in progress", total, o.opts.Now(), o.st)
	o.progress.Reading()
	o.progress.SetWidth(o.width)
	ctx, stop := context.WithCancel(o.ctx)
	o.stop, o.stopping = stop, false
	ch := make(chan int, 16)
	return tea.Batch(exportCmd(ctx, o.life, o.deps.Exporter, s, f, o.id, ch), waitExport(ch, o.id))
}

// exportCmd closes the screen's session, so what it held is back in the
// queue, then writes the file; progress goes to ch without ever blocking.
func exportCmd(ctx context.Context, lf *life, e Exporter, s ops.Session, f ops.FileExport, op int64, ch chan int) tea.Cmd {
	return func() tea.Msg {
		defer close(ch)
		if s != nil {
			_ = s.Close() // the deliveries return to the queue either way
		}
		if !lf.begin() {
			return exportedMsg{op: op, path: f.Output, err: context.Canceled}
		}
		defer lf.end()
		res, err := e.ExportFile(ctx, f, func(read int) {
			select {
			case ch <- read:
			default:
			}
		})
		return exportedMsg{op: op, path: f.Output, res: res, err: err}
	}
}

// waitExport delivers the next progress figure and is re-armed for as
// long as the channel is open.
func waitExport(ch <-chan int, op int64) tea.Cmd {
	return func() tea.Msg {
		n, ok := <-ch
		if !ok {
			return nil
		}
		return exportProgressMsg{op: op, read: n, ch: ch}
	}
}

func (o *operation) exportProgressed(msg exportProgressMsg) tea.Cmd {
	if msg.op != o.id || o.mode != running {
		return nil
	}
	c := o.progress.Counts()
	c.Done = msg.read
	c.Total = max(c.Total, msg.read)
	o.progress.Set(c, o.opts.Now())
	return waitExport(msg.ch, msg.op)
}

// exported says what the export wrote, and what the queue holds that the
// file does not; the screen then browses again.
func (o *operation) exported(msg exportedMsg) (tea.Cmd, wants) {
	if msg.op != o.id || o.mode != running {
		return nil, nothing
	}
	cancelled := o.ran()
	name, path := sanitize.Text(o.ref.Name), sanitize.Text(msg.path)
	switch {
	case cancelled && errors.Is(msg.err, context.Canceled):
		return common.Info("export of " + name + " cancelled: no file was written, every message went back to the queue"), o.ended(nothing)
	case errors.Is(msg.err, ops.ErrOutputAppeared):
		return common.ReportError(fmt.Errorf("%w; every message went back to %s", msg.err, name)), o.ended(nothing)
	case errors.Is(msg.err, fs.ErrNotExist), errors.Is(msg.err, fs.ErrPermission):
		return common.ReportError(fmt.Errorf("%w; press E to name another file", msg.err)), o.ended(nothing)
	case msg.err != nil:
		return common.ReportError(msg.err), o.ended(nothing)
	}
	r := msg.res
	o.result = fmt.Sprintf("exported %d of the %s read from %s to %s (%s, sha256 %s…)",
		r.Matched, format.Messages(r.Read), name, path, format.Bytes(r.Bytes), r.SHA256[:min(12, len(r.SHA256))])
	if r.Operation != "" {
		o.result += "; audit operation " + r.Operation
	}
	for _, l := range exportLeftWords(r.ExportResult) {
		o.result += " · " + l
	}
	if r.AuditErr != nil {
		return common.ReportError(fmt.Errorf("the export of %s is complete in %s but not in the audit log: %w", name, path, r.AuditErr)), o.ended(nothing)
	}
	return common.Info("export of " + name + " written: the file and what it holds are under the table, the record in the audit log (A)"), o.ended(nothing)
}

// exportLeftWords say what the queue holds that the file does not, as
// `dlq export` warns of it.
func exportLeftWords(r ops.ExportResult) []string {
	var out []string
	if n := r.Unread; n > 0 {
		out = append(out, fmt.Sprintf("%s not in the file: ready after the export started (%s); E again takes them", format.Messages(n), domain.ReadyAfterStart))
	}
	if n := r.Held; n > 0 {
		out = append(out, domain.HeldNote(n)+"; they are not in the file")
	}
	if n := r.Consumers; n > 0 {
		out = append(out, fmt.Sprintf("the queue has %s: what a consumer holds unacknowledged is not in the file", format.Plural(n, "consumer")))
	}
	return out
}
