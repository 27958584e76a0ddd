package auditlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

// incompleteDetail is the quarantine of sampleOps as its records tell it:
// two confirmed, one published without a confirm, one never moved, and a
// logical ID that tries to clear the screen.
func incompleteDetail() *ops.OperationDetail {
	s := sampleOps()[1]
	return &ops.OperationDetail{
		OperationSummary: s, Host: "ops-1", Context: "prod", Reason: "schema v3 rejected",
		Parking: "payments.dlq.quarantine", Walk: true, Destinations: []string{"queue payments.dlq.quarantine"}, Bytes: 4096,
		Messages: []ops.MessageEntry{
			{Seq: 8, LogicalID: "pay-1", MessageID: "m-1", Outcome: domain.OutcomeConfirmed},
			{Seq: 8, LogicalID: "pay-2", MessageID: "m-2", Outcome: domain.OutcomeConfirmed},
			{Seq: 7, LogicalID: "pay-3\x1b[2J", MessageID: "m-3", Outcome: domain.OutcomePublishing},
			{Seq: 7, LogicalID: "pay-4", MessageID: "m-4", Outcome: domain.OutcomePublishing},
		},
	}
}

func detailReader() *fakeReader {
	return &fakeReader{ops: sampleOps(), res: ops.Chain{AuditResult: domain.AuditResult{OK: true, Records: 8, LastSeq: 8}, Operations: 2},
		details: map[string]*ops.OperationDetail{"20240501T025000Z-0badc0de": incompleteDetail()}}
}

// fakeResumer plans and runs resumes; a run reports two figures and waits
// for release (or its cancel) before it ends.
type fakeResumer struct {
	mu      sync.Mutex
	planned []string
	err     error
	release chan struct{}
	ran     int
	// confirm is what the plan asks to be typed (the rule lives in the
	// operations layer).
	confirm ops.Confirm
}

func (f *fakeResumer) Plan(_ context.Context, s ops.Scope) (*ops.Plan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, id := s.Queue, s.Operation
	if s.Action != ops.Resume {
		return nil, fmt.Errorf("planned %s, want a resume", s.Action)
	}
	f.planned = append(f.planned, q.Vhost+" "+q.Name+" "+id)
	if f.err != nil {
		return nil, f.err
	}
	return &ops.Plan{Action: ops.Resume, Decided: true, Operation: id, Queue: q, Twins: 2, Unconfirmed: 1, Depth: 2, Publish: 2,
		Destinations: []ops.Destination{{Name: "queue payments.parking (default exchange)", Count: 2}}, Confirm: f.confirm,
		Summary: "Resume quarantine " + id + " on " + q.Name + " (started 2024-05-01T02:50:00Z): remove up to 2 twins of recorded confirms, then quarantine what the operation had not moved?"}, nil
}

func (f *fakeResumer) Run(ctx context.Context, p *ops.Plan, progress func(ops.Progress)) (ops.Result, error) {
	f.mu.Lock()
	f.ran++
	f.mu.Unlock()
	progress(ops.Progress{Done: 1, Confirmed: 1, At: t0.Add(time.Second)}) // a resume does not know its total
	select {
	case <-f.release:
	case <-ctx.Done():
		return ops.Result{Counts: ops.Counts{Operation: p.Operation, Selected: 1, Confirmed: 1, NotSent: 1, Cancelled: true}}, nil
	}
	progress(ops.Progress{Total: 2, Done: 2, Confirmed: 2, Finished: true, At: t0.Add(2 * time.Second)})
	return ops.Result{Counts: ops.Counts{Operation: p.Operation, Selected: 2, Confirmed: 2, Deduplicated: 2, PossibleDuplicates: 1}}, nil
}

func detailModel(r Reader, opts Options) *Detail {
	opts.Now = func() time.Time { return t0 }
	opts.Styles = styles.New(true)
	d := NewDetail(r, sampleOps()[1], opts)
	d.SetSize(120, 40)
	return d
}

func press(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func TestGoldenOperationDetail(t *testing.T) {
	d := NewDetail(detailReader(), sampleOps()[1], Options{Now: func() time.Time { return t0 }, Styles: styles.New(true)})
	tm := teatest.NewTestModel(t, program{s: d}, teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("pay-4")) }, teatest.WithDuration(5*time.Second))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	teatest.RequireEqualOutput(t, []byte(tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()))
}

func TestEnterOpensTheOperationUnderTheCursor(t *testing.T) {
	m := newModel(detailReader())
	settle(t, m, m.Init())
	_, cmd := m.Update(press("enter"))
	push, ok := cmd().(common.PushMsg)
	if !ok {
		t.Fatal("enter did not open a screen")
	}
	d := push.Screen.(*Detail)
	d.SetSize(120, 40)
	cmd = d.Init()
	if v := d.View(); !strings.Contains(v, "reading the operation's records") {
		t.Fatalf("before its records are read:\n%s", v)
	}
	runDetail(t, d, cmd)
	v := d.View()
	for _, want := range []string{
		"Operation 20240501T025000Z-0badc0de  quarantine · INCOMPLETE",
		"bob on ops-1 · context prod",
		"payments.dlq in vhost / · target queue payments.dlq.quarantine",
		"no filter · selected 4 · 4.0 KiB · reason schema v3 rejected · walked the whole queue",
		"confirmed 2 · published, no confirm 2",
		"no final record: interrupted, or still running — R resumes it",
		`pay-3\x1b[2J`, "published, no confirm",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the detail lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "\x1b[2J") {
		t.Error("an escape sequence from a logical ID reached the screen")
	}
}

// runDetail runs d's commands and feeds their answers back.
func runDetail(t *testing.T, d *Detail, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	var out []tea.Msg
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case common.ErrorMsg, common.InfoMsg:
			out = append(out, msg)
		case nil:
		default:
			_, next := d.Update(msg)
			queue = append(queue, next)
		}
	}
	return out
}

func TestALargeOperationFiltersAndDrawsOnlyTheRowsOnScreen(t *testing.T) {
	const n = 100_000
	big := incompleteDetail()
	big.Messages = make([]ops.MessageEntry, n)
	for i := range big.Messages {
		big.Messages[i] = ops.MessageEntry{Seq: int64(10 + i/500), LogicalID: fmt.Sprintf("ev-%06d", i), MessageID: fmt.Sprintf("m-%06d", i), Outcome: domain.OutcomeConfirmed}
	}
	big.Messages[77_777].Outcome = domain.OutcomeUnknown
	r := detailReader()
	r.details["20240501T025000Z-0badc0de"] = big
	d := detailModel(r, Options{})
	runDetail(t, d, d.Init())
	if lines := strings.Count(d.View(), "\n") + 1; lines > 40 {
		t.Fatalf("the view is %d lines for a 40-line screen", lines)
	}
	if v := d.View(); !strings.Contains(v, "100000 messages · rows 1–") || !strings.Contains(v, "ev-000000") || strings.Contains(v, "ev-099999") {
		t.Fatalf("the first page:\n%s", v)
	}
	d.Update(press("G"))
	if v := d.View(); !strings.Contains(v, "> ev-099999") {
		t.Fatalf("G did not reach the last message:\n%s", v)
	}
	d.Update(press("/"))
	if !d.Capturing() {
		t.Fatal("typing a filter does not capture the keys")
	}
	for _, r := range "UNKNOWN" {
		d.Update(press(string(r)))
	}
	d.Update(press("enter"))
	v := d.View()
	if !strings.Contains(v, `1 of 100000 messages match "UNKNOWN"`) || !strings.Contains(v, "> ev-077777") {
		t.Fatalf("filtering by outcome, case-blind:\n%s", v)
	}
	if d.Capturing() {
		t.Fatal("enter did not keep the filter and give the keys back")
	}
	d.Update(press("/"))
	d.Update(press("esc"))
	if v := d.View(); !strings.Contains(v, "100000 messages") || strings.Contains(v, "match") {
		t.Fatalf("esc did not clear the filter:\n%s", v)
	}
}

func TestAnUnreadableOperationIsReported(t *testing.T) {
	r := detailReader()
	delete(r.details, "20240501T025000Z-0badc0de")
	d := detailModel(r, Options{})
	out := runDetail(t, d, d.Init())
	if len(out) != 1 || !strings.Contains(out[0].(common.ErrorMsg).Err.Error(), "reading operation 20240501T025000Z-0badc0de from the audit log (file /var/lib/warren/audit.jsonl) failed") {
		t.Fatalf("reported %v", out)
	}
}

func TestResumeAsksThenRunsWithProgressAndReloads(t *testing.T) {
	r := detailReader()
	res := &fakeResumer{release: make(chan struct{})}
	m := New(r, Options{Now: func() time.Time { return t0 }, Styles: styles.New(true), Resumer: res})
	m.SetSize(120, 40)
	settle(t, m, m.Init())
	loads := len(r.limits)

	_, cmd := m.Update(press("R"))
	if v := m.View(); !strings.Contains(v, "reading what the resume would do") {
		t.Fatalf("while planning:\n%s", v)
	}
	m.Update(cmd())
	v := m.View()
	if !strings.Contains(v, "Resume quarantine 20240501T025000Z-0badc0de on payments.dlq") || !strings.Contains(v, "Proceed? (y goes on, n or esc cancels)") ||
		!strings.Contains(v, "twins of recorded confirms: up to 2 · recorded as going out, no confirm recorded (published, or never sent): 1") {
		t.Fatalf("the prompt:\n%s", v)
	}
	if got := fmt.Sprint(res.planned); got != "[/ payments.dlq 20240501T025000Z-0badc0de]" {
		t.Fatalf("planned %s", got)
	}
	_, cmd = m.Update(press("y"))
	if !m.Capturing() {
		t.Fatal("a running resume lets esc leave the screen")
	}
	// Run the batch by hand: the progress first, then the result.
	batch := cmd().(tea.BatchMsg)
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	_, next := m.Update(batch[1]())
	if v := m.View(); !strings.Contains(v, "Resume of 20240501T025000Z-0badc0de in progress") || !strings.Contains(v, "1/2") {
		t.Fatalf("the progress:\n%s", v)
	}
	_, cmd = m.Update(press("j"))
	if out := cmd(); !strings.Contains(out.(common.ErrorMsg).Err.Error(), "press x to cancel it") {
		t.Fatalf("a key during the run: %v", out)
	}
	close(res.release)
	_ = next
	_, cmd = m.Update(<-done)
	var info string
	for _, c := range cmd().(tea.BatchMsg) {
		switch msg := c().(type) {
		case common.InfoMsg:
			info = msg.Text
		case resumedMsg:
			settle(t, m, func() tea.Msg { return msg })
		}
	}
	if !strings.HasPrefix(info, "resumed 20240501T025000Z-0badc0de: 2 twins removed, 2 published again (1 possible duplicates), 2 confirmed") {
		t.Fatalf("the result: %q", info)
	}
	if len(r.limits) != loads+1 || m.Capturing() {
		t.Fatalf("the list was not reloaded after the resume (%d loads, capturing %v)", len(r.limits)-loads, m.Capturing())
	}
}

func TestXCancelsARunningResume(t *testing.T) {
	res := &fakeResumer{release: make(chan struct{})}
	d := detailModel(detailReader(), Options{Resumer: res})
	runDetail(t, d, d.Init())
	_, cmd := d.Update(press("R"))
	d.Update(cmd())
	_, cmd = d.Update(press("y"))
	batch := cmd().(tea.BatchMsg)
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	d.Update(press("x"))
	if v := d.View(); !strings.Contains(v, "Resume cancelling") {
		t.Fatalf("after x:\n%s", v)
	}
	_, cmd = d.Update(<-done)
	var info string
	for _, c := range cmd().(tea.BatchMsg) {
		if msg, ok := c().(common.InfoMsg); ok {
			info = msg.Text
		}
	}
	if !strings.Contains(info, "1 not sent (still in the DLQ) (cancelled)") {
		t.Fatalf("the result of a cancelled resume: %q", info)
	}
}

func TestResumeSaysWhyItDoesNothing(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		cursor int // 0 is the incomplete quarantine, 1 the finished replay
		res    *fakeResumer
		want   string
	}{
		{name: "a finished operation", cursor: 1, res: &fakeResumer{}, want: "operation 20240501T020000Z-9f86d081 finished at 2024-05-01T02:10:00Z: there is nothing to resume"},
		{name: "a read-only context", opts: Options{ReadOnly: true}, want: "this context is read-only"},
		{name: "a refusal from the plan", res: &fakeResumer{err: errors.New("operation X acted on a held page")}, want: "cannot resume: operation X acted on a held page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Now, opts.Styles = func() time.Time { return t0 }, styles.New(true)
			if tt.res != nil {
				opts.Resumer = tt.res
			}
			m := New(detailReader(), opts)
			m.SetSize(120, 40)
			settle(t, m, m.Init())
			for range tt.cursor {
				m.Update(press("j"))
			}
			_, cmd := m.Update(press("R"))
			msg := cmd()
			if p, ok := msg.(resumePlanMsg); ok {
				_, cmd = m.Update(p)
				msg = cmd()
			}
			var text string
			switch msg := msg.(type) {
			case common.InfoMsg:
				text = msg.Text
			case common.ErrorMsg:
				text = msg.Err.Error()
			}
			if !strings.Contains(text, tt.want) {
				t.Fatalf("R said %q, want %q", text, tt.want)
			}
			if m.resume.Busy() {
				t.Fatal("the screen still waits on a resume")
			}
		})
	}
}

func TestAProductionResumeAsksForTheQueueAndTheCount(t *testing.T) {
	d := detailModel(detailReader(), Options{Resumer: &fakeResumer{confirm: ops.Confirm{Phrase: "payments.dlq 2", Why: "production context"}}})
	runDetail(t, d, d.Init())
	_, cmd := d.Update(press("R"))
	d.Update(cmd())
	if v := d.View(); !strings.Contains(v, `type "payments.dlq 2"`) || !d.Capturing() {
		t.Fatalf("the production prompt:\n%s", v)
	}
	_, cmd = d.Update(press("esc"))
	if msg, ok := cmd().(common.InfoMsg); !ok || !strings.Contains(msg.Text, "nothing was changed") || d.resume.Busy() {
		t.Fatalf("esc at the prompt: %v", msg)
	}
}

// Whoever can write the audit store can write any outcome: one this
// screen has no words for is drawn sanitised, in the list and the counts.
func TestAnUnknownOutcomeReachesTheScreenSanitised(t *testing.T) {
	r := detailReader()
	hostile := "x\x1b]0;pwned\x07\x1b[2J"
	r.details["20240501T025000Z-0badc0de"].Messages[3].Outcome = hostile
	d := detailModel(r, Options{})
	runDetail(t, d, d.Init())
	v := d.View()
	if strings.Contains(v, "\x1b]") || strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\x07") {
		t.Fatalf("an escape sequence from an outcome reached the screen:\n%q", v)
	}
	if !strings.Contains(v, `x\x1b]0;pwned`) {
		t.Fatalf("the unknown outcome is not shown, escaped:\n%s", v)
	}
}

func TestTheDrillDownShowsAStagedReplaysVerdictsAndItsHalt(t *testing.T) {
	s := sampleOps()[1]
	s.Action = "replay"
	s.Stages = []domain.StageVerdict{
		{Stage: 0, Size: 10, Applied: 10, Verdict: domain.VerdictPassed, Why: "every copy applied"},
		{Stage: 1, Size: 100, Applied: 60, FailedAgain: 37, Pending: 3, Verdict: domain.VerdictHalted},
	}
	s.Halted = "after stage 1: 37 of 100 copies failed again, NullReferenceException in OrderConsumer (group 3f2a\x1b[2J)"
	r := detailReader()
	r.details = map[string]*ops.OperationDetail{s.Operation: {OperationSummary: s}}
	d := NewDetail(r, s, Options{Now: func() time.Time { return t0 }, Styles: styles.New(true)})
	d.SetSize(160, 40)
	runDetail(t, d, d.Init())
	v := d.View()
	for _, want := range []string{
		"HALTED",
		"the canary (10): 0 failed again, 10 applied, 0 pending: passed (every copy applied)",
		"stage 1 (100): 37 failed again, 60 applied, 3 pending: halted",
		"halted after stage 1: 37 of 100 copies failed again, NullReferenceException in OrderConsumer (group 3f2a",
		"R resumes it",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("drill-down lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "\x1b[2J") {
		t.Error("a halt reason drew an escape sequence")
	}
}

// An export opened says where its file went and what it took, and that
// its messages are named in the file, not in the log.
func TestAnExportOpenedNamesItsFile(t *testing.T) {
	done := t0.Add(-time.Minute)
	s := domain.OperationSummary{Operation: "20240501T030000Z-0e0e0e0e", Action: ops.ActionExport, Vhost: "/", Queue: "orders.dlq",
		Target: "/srv/orders.jsonl", Operator: "alice", Started: done, Finished: &done, Selected: 30, FirstSeq: 9, LastSeq: 9,
		Counts: map[string]int{domain.OutcomeExported: 30}}
	r := &fakeReader{ops: []domain.OperationSummary{s}, details: map[string]*ops.OperationDetail{s.Operation: {
		OperationSummary: s, Host: "ops-1", Context: "prod", Bytes: 4096, FileSHA256: "ab12cd",
		Final: map[string]string{domain.OutcomeExported: "30", "selected": "30"}}}}
	d := NewDetail(r, s, Options{Now: func() time.Time { return t0 }, Styles: styles.New(true)})
	d.SetSize(120, 30)
	runDetail(t, d, d.Init())
	v := d.View()
	for _, want := range []string{"export · done", "to       file /srv/orders.jsonl · sha256 ab12cd", "outcomes exported 30",
		"an export names its messages in its file"} {
		if !strings.Contains(v, want) {
			t.Errorf("the export's detail lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "decided per message") || strings.Contains(v, "none recorded") {
		t.Errorf("the export's detail reads as a replay's:\n%s", v)
	}
}

// On 80 columns the detail's lines wrap between words, never inside
// one: a time broken at its hyphen reads as two.
func TestTheDetailWrapsBetweenWords(t *testing.T) {
	d := detailModel(detailReader(), Options{})
	d.SetSize(80, 40)
	d.Update(d.Init()())
	v := ansi.Strip(d.View())
	if !strings.Contains(v, "when") {
		t.Fatalf("no detail drawn:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if strings.HasSuffix(strings.TrimRight(l, " "), "-") {
			t.Errorf("a line ends inside a word: %q\n%s", l, v)
		}
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d cells on 80: %q", w, l)
		}
	}
}
