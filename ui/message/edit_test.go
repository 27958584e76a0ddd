package message

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

type fakeEditor struct {
	finishErr error
	edited    []*ops.Plan
}

func (f *fakeEditor) StartEdit(_ context.Context, q domain.QueueRef, _ ops.Holder, d domain.DeadLetter) (*ops.EditDraft, error) {
	return &ops.EditDraft{Queue: q, Letter: d, Path: "/tmp/warren-edit-test.json"}, nil
}

func (f *fakeEditor) Plan(_ context.Context, s ops.Scope) (*ops.Plan, error) {
	if s.Action != ops.Edit || s.Draft == nil {
		return nil, fmt.Errorf("planned %s without a draft, want an edit", s.Action)
	}
	if f.finishErr != nil {
		return nil, f.finishErr
	}
	return &ops.Plan{
		Action: ops.Edit, Decided: true, Publish: 1, Selected: 1,
		Summary: "Resubmit the edited message ev-42 from orders.dlq to queue orders (default exchange)?",
		Lines:   []string{"the original leaves orders.dlq only once the broker confirms the copy"},
		Diff:    "--- body (original)\n+++ body (edited)\n@@ -1 +1 @@\n-\"total\": \"19.90\"\n+\"total\": \"19.95\x1b[31m\"\n",
	}, nil
}

func (f *fakeEditor) Run(_ context.Context, p *ops.Plan, _ func(ops.Progress)) (ops.Result, error) {
	f.edited = append(f.edited, p)
	return ops.Result{Counts: ops.Counts{Operation: "20240501T030000Z-abc", Selected: 1, Confirmed: 1}}, nil
}

// heldBy stands for the DLQ screen's session: only the operations layer
// asks it what it holds, and the fake editor does not.
type heldBy struct{ ops.Holder }

// run runs cmd and every command a batch holds, returning the messages.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, run(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// one feeds msg to m and expects exactly one message back.
func one(t *testing.T, m *Model, msg tea.Msg) tea.Msg {
	t.Helper()
	_, cmd := m.Update(msg)
	got := run(cmd)
	if len(got) != 1 {
		t.Fatalf("%T gave %d messages (%v), want 1", msg, len(got), got)
	}
	return got[0]
}

func editingModel(ed *fakeEditor, ran *[]*exec.Cmd) *Model {
	msg := sample()
	msg.Session = heldBy{} // the DLQ screen's session
	return New(msg, Options{Now: func() time.Time { return t0 }, Styles: styles.New(true), Editor: ed,
		Exec: func(c *exec.Cmd, fn tea.ExecCallback) tea.Cmd {
			*ran = append(*ran, c)
			return func() tea.Msg { return fn(nil) }
		}})
}

func press(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func TestEditRunsTheEditorThenPromptsWithTheDiffAndReportsTheResult(t *testing.T) {
	t.Setenv("EDITOR", "nano")
	ed := &fakeEditor{}
	var ran []*exec.Cmd
	m := editingModel(ed, &ran)
	m.SetSize(120, 40)

	draft := one(t, m, press("e"))
	edited := one(t, m, draft)
	if len(ran) != 1 || !slices.Contains(ran[0].Args, "/tmp/warren-edit-test.json") || !strings.Contains(strings.Join(ran[0].Args, " "), "nano") {
		t.Fatalf("editor commands run: %v, want $EDITOR on the draft", ran)
	}
	if e, ok := edited.(EditedMsg); !ok || e.Err != nil {
		t.Fatalf("after the editor: %#v, want EditedMsg without error", edited)
	}
	if _, cmd := m.Update(one(t, m, edited)); cmd != nil {
		t.Fatalf("the plan should open a prompt, not run anything")
	}
	view := m.View()
	for _, want := range []string{"Edit and resubmit", "Resubmit the edited message ev-42", `-"total": "19.90"`, `+"total": "19.95`, "Proceed? (y goes on, n or esc cancels)"} {
		if !strings.Contains(view, want) {
			t.Errorf("prompt lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "\x1b[31m") {
		t.Errorf("the diff reached the screen unsanitised:\n%q", view)
	}
	if !m.Capturing() {
		t.Error("an open prompt must capture keys")
	}

	res := one(t, m, press("y"))
	_, cmd := m.Update(res)
	msgs := run(cmd)
	if len(ed.edited) != 1 {
		t.Fatalf("Edit called %d times, want once after the yes", len(ed.edited))
	}
	var info string
	var changed bool
	for _, msg := range msgs {
		switch msg := msg.(type) {
		case common.InfoMsg:
			info = msg.Text
		case common.HeldChangedMsg:
			changed = msg.Queue.Name == "orders.dlq"
		}
	}
	if !strings.Contains(info, "edit 20240501T030000Z-abc: the edited copy was confirmed and the original left orders.dlq") || !changed {
		t.Errorf("after the edit: %#v, want the result line and the DLQ screen told", msgs)
	}
	if m.Capturing() || strings.Contains(m.View(), "Proceed?") {
		t.Error("the prompt is still open after the edit")
	}
	// The inspector stays on what the message was, and says it is gone:
	// another edit of it is not offered.
	if v := m.View(); !strings.Contains(v, "no longer in orders.dlq: its edited copy was confirmed and it was acked (edit 20240501T030000Z-abc)") {
		t.Errorf("after the edit the inspector does not say the message left:\n%s", v)
	}
	if got := one(t, m, press("e")); got == nil {
		t.Error("e on a message that left the queue did nothing")
	} else if info, ok := got.(common.InfoMsg); !ok || !strings.Contains(info.Text, "no longer in orders.dlq") {
		t.Errorf("e on a message that left the queue: %#v, want it said gone", got)
	}
}

func TestEditThatCannotGoSaysSoAndPublishesNothing(t *testing.T) {
	ed := &fakeEditor{finishErr: errors.New("the edit changed nothing: nothing was published; the message stays in orders.dlq")}
	var ran []*exec.Cmd
	m := editingModel(ed, &ran)
	edited := one(t, m, one(t, m, press("e")))
	got := one(t, m, one(t, m, edited))
	if e, ok := got.(common.ErrorMsg); !ok || !strings.Contains(e.Err.Error(), "changed nothing") {
		t.Fatalf("got %#v, want the one-line error", got)
	}
	if len(ed.edited) != 0 || m.Capturing() {
		t.Errorf("published %d, prompt open %v; want nothing", len(ed.edited), m.Capturing())
	}
}

func TestEditDeclinedPublishesNothing(t *testing.T) {
	ed := &fakeEditor{}
	var ran []*exec.Cmd
	m := editingModel(ed, &ran)
	m.Update(one(t, m, one(t, m, one(t, m, press("e")))))
	got := one(t, m, press("n"))
	if i, ok := got.(common.InfoMsg); !ok || !strings.Contains(i.Text, "not confirmed: nothing was published") {
		t.Fatalf("got %#v", got)
	}
	if len(ed.edited) != 0 {
		t.Error("a declined edit was published")
	}
}

func TestEditIsRefusedInAReadOnlyContext(t *testing.T) {
	var ran []*exec.Cmd
	m := editingModel(nil, &ran)
	m.opts.Editor, m.opts.ReadOnly = nil, true
	got := one(t, m, press("e"))
	if e, ok := got.(common.ErrorMsg); !ok || !strings.Contains(e.Err.Error(), "read-only context") {
		t.Fatalf("got %#v, want the read-only refusal", got)
	}
	if len(ran) != 0 {
		t.Error("an editor ran in a read-only context")
	}
}

func TestGoldenEditPrompt(t *testing.T) {
	var ran []*exec.Cmd
	m := editingModel(&fakeEditor{}, &ran)
	tm := teatest.NewTestModel(t, program{s: m}, teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Dead-lettering")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(press("e"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Proceed?")) },
		teatest.WithDuration(5*time.Second))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	teatest.RequireEqualOutput(t, []byte(tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()))
}

// Once confirmed, the edited copy may be in flight on the DLQ screen's
// session until the broker confirms it: no key leaves the screen, the
// screen says what it waits for, and closing it (ctrl+c quits through
// Close) waits for the outcome before the session below is closed.
func TestAConfirmedEditHoldsTheScreenUntilItSettles(t *testing.T) {
	ed := &fakeEditor{}
	var ran []*exec.Cmd
	m := editingModel(ed, &ran)
	m.SetSize(120, 40)
	draft := one(t, m, press("e"))
	edited := one(t, m, draft)
	m.Update(one(t, m, edited))
	_, publish := m.Update(press("y"))
	if publish == nil {
		t.Fatal("y published nothing")
	}
	if !m.Capturing() || !strings.Contains(m.View(), "publishing the edited copy") {
		t.Fatalf("while the copy is published the screen must hold its keys and say so (capturing %v):\n%s", m.Capturing(), m.View())
	}
	if got := one(t, m, tea.KeyMsg{Type: tea.KeyEsc}); !strings.Contains(fmt.Sprint(got), "wait for its confirm") {
		t.Fatalf("esc while publishing gave %#v", got)
	}
	closing := m.Close()
	if closing == nil {
		t.Fatal("Close does not wait for the edit in flight")
	}
	closed := make(chan struct{})
	go func() { closing(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while the edit was still to publish")
	case <-time.After(50 * time.Millisecond):
	}
	res := publish()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waits after the edit settled")
	}
	m.Update(res)
	if m.Capturing() || m.Close() != nil {
		t.Fatal("the screen still holds its keys after the edit settled")
	}
}

// discardingEditor writes a real draft file, as ops does: it holds the
// message's body.
type discardingEditor struct {
	fakeEditor
	dir string
}

func (f *discardingEditor) StartEdit(_ context.Context, q domain.QueueRef, _ ops.Holder, d domain.DeadLetter) (*ops.EditDraft, error) {
	p := filepath.Join(f.dir, "draft.json")
	if err := os.WriteFile(p, d.Body, 0o600); err != nil {
		return nil, err
	}
	return &ops.EditDraft{Queue: q, Letter: d, Path: p}, nil
}

// The draft holds the message's body: closing the inspector before it is
// written leaves nothing of it on disk.
func TestClosingBeforeTheDraftIsWrittenRemovesIt(t *testing.T) {
	ed := &discardingEditor{dir: t.TempDir()}
	var ran []*exec.Cmd
	m := editingModel(&ed.fakeEditor, &ran)
	m.opts.Editor = ed
	m.SetSize(120, 40)
	_, write := m.Update(press("e"))
	if write == nil {
		t.Fatal("e wrote no draft")
	}
	m.Close()
	if msg := write(); msg != nil {
		t.Fatalf("the draft of a closed screen was handed on: %#v", msg)
	}
	if left, _ := os.ReadDir(ed.dir); len(left) != 0 {
		t.Fatalf("the draft stayed on disk: %v", left)
	}
}

// The editor is given the terminal itself, not the program's input,
// which exec would pipe to it through a goroutine outliving the editor.
func TestTheEditorIsGivenTheTerminal(t *testing.T) {
	c := exec.Command("true")
	_ = execProcess(c, nil)
	if c.Stdin != os.Stdin {
		t.Fatalf("the editor's input is %v, want the terminal (os.Stdin)", c.Stdin)
	}
}
