package deadletters

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

// fakeExporter records what it was asked and whether the screen's
// session still held its messages then; block, when set, holds the
// export until its context ends.
type fakeExporter struct {
	mu       sync.Mutex
	asked    []ops.FileExport
	watch    *fakeSession
	closedAt []bool
	block    bool
	res      ops.FileExportResult
}

func (e *fakeExporter) ExportFile(ctx context.Context, f ops.FileExport, progress func(read int)) (ops.FileExportResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, f)
	e.closedAt = append(e.closedAt, e.watch.isClosed())
	e.mu.Unlock()
	progress(2)
	if e.block {
		<-ctx.Done()
		return ops.FileExportResult{}, ctx.Err()
	}
	progress(4)
	return e.res, nil
}

func (e *fakeExporter) calls() ([]ops.FileExport, []bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]ops.FileExport(nil), e.asked...), append([]bool(nil), e.closedAt...)
}

func exportDriver(t *testing.T, e *fakeExporter) (*driver, *fakeBrowser) {
	t.Helper()
	first := newSession(ops.Page{Letters: sampleLetters()})
	again := newSession(ops.Page{Letters: sampleLetters()})
	b := &fakeBrowser{sessions: []*fakeSession{first, again}}
	e.watch = first
	d := newDriver(t, Deps{Browser: b, Inbox: fakeInbox{}, Exporter: e}, Options{ReadOnly: true})
	d.browsing(4)
	return d, b
}

// E asks for the file, offering one named after the queue and the time;
// the screen gives back what it holds before the export reads the queue,
// the result names the file and the audit operation, and browsing
// resumes. An export reads: a read-only context offers it too.
func TestExportWritesTheQueueToTheFileNamedAndBrowsesAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "orders.jsonl.gz")
	e := &fakeExporter{res: ops.FileExportResult{ExportResult: ops.ExportResult{Read: 4, Matched: 2, Unread: 1},
		SHA256: "9f86d081884c7d659a2feaa0c55ad015", Bytes: 2048, Operation: "20240501T030000Z-abcd"}}
	d, b := exportDriver(t, e)
	d.keys("/")
	d.typeText(`reason == "rejected"`)
	d.keys("enter")
	d.keys("E")
	v := d.m.View()
	for _, want := range []string{`Write every message of orders.dlq matching reason == "rejected" to a file`, "orders.dlq-20240501T030000Z.jsonl.gz",
		"this screen gives back the 4 messages it holds first"} {
		if !strings.Contains(v, want) {
			t.Errorf("the question lacks %q:\n%s", want, v)
		}
	}
	d.retype(path)
	d.keys("enter")
	d.until("the result and a new session", func() bool {
		return d.m.op.result != "" && d.m.state == browsing && len(d.m.held.letters) == 4
	})
	asked, closed := e.calls()
	if len(asked) != 1 || asked[0].Output != path || asked[0].Queue != ref || asked[0].Force || asked[0].FilterText != `reason == "rejected"` || asked[0].Filter == nil {
		t.Fatalf("asked %+v, want the file named, not forced, with the screen's filter", asked)
	}
	if !closed[0] {
		t.Error("the screen's session still held its messages when the export read the queue")
	}
	for _, want := range []string{"exported 2 of the 4 messages read from orders.dlq to " + path, "2.0 KiB", "sha256 9f86d081884c…",
		"audit operation 20240501T030000Z-abcd", "1 message not in the file: ready after the export started"} {
		if !strings.Contains(d.m.op.result, want) {
			t.Errorf("the result %q lacks %q", d.m.op.result, want)
		}
	}
	if len(b.allowRisk) != 2 {
		t.Errorf("browse sessions opened: %d, want the first and one after the export", len(b.allowRisk))
	}
}

// A file already there is never replaced: the question is asked again,
// saying so, before the screen gives anything back.
func TestExportAsksAgainForAFileAlreadyThere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept.jsonl")
	if err := os.WriteFile(path, []byte("an earlier export\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &fakeExporter{}
	d, _ := exportDriver(t, e)
	d.keys("E")
	d.retype(path)
	d.keys("enter")
	d.until("the question again", func() bool { return d.m.mode() == prompting && strings.Contains(d.m.View(), "already exists") })
	if v := d.m.View(); !strings.Contains(v, "name another file") || !strings.Contains(v, path) {
		t.Errorf("the question asked again does not say why, with the name typed:\n%s", v)
	}
	if asked, _ := e.calls(); len(asked) != 0 || d.m.state != browsing || len(d.m.held.letters) != 4 {
		t.Errorf("exported %d times, state %v with %d held: want nothing read and the session kept", len(asked), d.m.state, len(d.m.held.letters))
	}
	d.keys("esc")
	if !strings.Contains(d.infoText(), "nothing was changed") {
		t.Error("esc at the question did not say nothing changed")
	}
}

// A directory that is not there is said in the question, before the
// screen gives anything back.
func TestExportAsksAgainForADirectoryNotThere(t *testing.T) {
	e := &fakeExporter{}
	d, _ := exportDriver(t, e)
	d.m.SetSize(300, 40) // the reason on one line
	d.keys("E")
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	d.retype(filepath.Join(missing, "x.jsonl"))
	d.keys("enter")
	d.until("the question again", func() bool {
		return d.m.mode() == prompting && strings.Contains(d.m.View(), "cannot write a file in "+missing+": no such file or directory")
	})
	if asked, _ := e.calls(); len(asked) != 0 || d.m.state != browsing {
		t.Errorf("exported %d times, state %v: want nothing read and the session kept", len(asked), d.m.state)
	}
}

// ~ is the operator's home, as at a shell.
func TestExportTakesTildeForHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	e := &fakeExporter{res: ops.FileExportResult{SHA256: "ab"}}
	d, _ := exportDriver(t, e)
	d.keys("E")
	d.retype("~/x.jsonl")
	d.keys("enter")
	d.until("the export", func() bool { asked, _ := e.calls(); return len(asked) == 1 })
	if asked, _ := e.calls(); asked[0].Output != filepath.Join(home, "x.jsonl") {
		t.Errorf("exported to %q, want it in the home directory", asked[0].Output)
	}
}

// x cancels a running export: no file, every message back, browsing again.
func TestExportCancelledWritesNothingAndBrowsesAgain(t *testing.T) {
	e := &fakeExporter{block: true}
	d, _ := exportDriver(t, e)
	d.keys("E")
	d.retype(filepath.Join(t.TempDir(), "x.jsonl"))
	d.keys("enter")
	d.until("the export running", func() bool { return d.m.mode() == running && d.m.op.progress.Counts().Done == 2 })
	if v := d.m.View(); !strings.Contains(v, "Export to ") || strings.Contains(v, "confirmed 0") {
		t.Errorf("the progress of an export is not a read's:\n%s", v)
	}
	d.keys("r")
	if !strings.Contains(d.errorText(), "in progress") {
		t.Error("a key while the export runs did not say it waits")
	}
	d.keys("x")
	if got := d.infoText(); !strings.Contains(got, "cancelled: no file was written") {
		t.Errorf("cancel said %q", got)
	}
	d.until("a new session", func() bool { return d.m.state == browsing && len(d.m.held.letters) == 4 })
}

func TestExportIsRefusedWhereItCannotRead(t *testing.T) {
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{newSession(ops.Page{Letters: sampleLetters()})}}, Inbox: fakeInbox{}},
		Options{})
	d.browsing(4)
	d.keys("E")
	if got := d.errorText(); !strings.Contains(got, "export is not available") {
		t.Errorf("without an exporter: %q", got)
	}
}

func TestExportNameIsAFileNameOfTheQueue(t *testing.T) {
	for name, want := range map[string]string{
		"orders.dlq":        "orders.dlq-20240501T030000Z.jsonl.gz",
		"../etc/passwd":     "_etc_passwd-20240501T030000Z.jsonl.gz",
		"Shop.Orders, Shop": "Shop.Orders__Shop-20240501T030000Z.jsonl.gz",
		"...":               "dlq-20240501T030000Z.jsonl.gz",
	} {
		if got := exportName(domain.QueueRef{Vhost: "/", Name: name}, t0); got != want {
			t.Errorf("exportName(%q) = %q, want %q", name, got, want)
		}
	}
}

// retype replaces the answer the question offers with s.
func (d *driver) retype(s string) {
	d.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	d.typeText(s)
}
