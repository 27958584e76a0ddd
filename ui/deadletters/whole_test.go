package deadletters

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/ops"
)

// wholeDriver browses sampleLetters with a second session ready for the
// reopen after a whole-queue operation.
func wholeDriver(t *testing.T, opts Options, acts *fakeActions) (*driver, *fakeSession, *fakeBrowser) {
	t.Helper()
	first := newSession(ops.Page{Letters: sampleLetters()})
	again := newSession(ops.Page{Letters: sampleLetters()[:1]})
	b := &fakeBrowser{sessions: []*fakeSession{first, again}}
	acts.watch = first
	d := newDriver(t, Deps{Browser: b, Actions: acts, Inbox: fakeInbox{}}, opts)
	d.browsing(4)
	return d, first, b
}

func ctrl(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k} }

func TestWholeQueueReplayPlansTheQueueWithTheFilterAndBrowsesAgain(t *testing.T) {
	acts := &fakeActions{whole: 7}
	d, first, b := wholeDriver(t, Options{}, acts)
	d.keys("/")
	d.typeText(`reason == "rejected"`)
	d.keys("enter")
	d.send(ctrl(tea.KeyCtrlR))
	if !strings.Contains(d.m.View(), `reading orders.dlq to plan the replay of every message of the queue matching reason == "rejected"`) {
		t.Errorf("planning line does not say the whole queue is read:\n%s", d.m.View())
	}
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	reqs, _ := acts.plans()
	if len(reqs) != 1 || reqs[0].Held != nil || reqs[0].FilterText != `reason == "rejected"` || reqs[0].Filter == nil || len(reqs[0].Letters) != 0 {
		t.Fatalf("plan request = %+v, want the whole queue with the screen's filter", reqs)
	}
	if !acts.closedAtPlan[0] || !first.isClosed() {
		t.Error("the browse session was still holding messages when the whole queue was planned")
	}
	if !strings.Contains(d.m.View(), "replay 7 messages from orders.dlq") {
		t.Errorf("prompt does not state the whole-queue plan:\n%s", d.m.View())
	}
	d.keys("y")
	d.until("the result and a new session", func() bool {
		return d.m.op.result != "" && d.m.state == browsing && len(d.m.held.letters) == 1
	})
	if _, exec := acts.plans(); len(exec) != 1 || exec[0].Publish != 7 {
		t.Fatalf("executed %+v, want the whole-queue plan of 7", exec)
	}
	if len(b.allowRisk) != 2 {
		t.Errorf("browse sessions opened: %d, want the first and one after the operation", len(b.allowRisk))
	}
}

func TestWholeQueueOperationBrowsesAgainWhenDropped(t *testing.T) {
	for _, tt := range []struct {
		name string
		drop func(d *driver)
	}{
		{"esc while the queue is read", func(d *driver) { d.keys("esc") }},
		{"n at the prompt", func(d *driver) {
			d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
			d.keys("n")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			acts := &fakeActions{whole: 3}
			d, _, _ := wholeDriver(t, Options{}, acts)
			d.send(ctrl(tea.KeyCtrlR))
			tt.drop(d)
			if !strings.Contains(d.infoText(), "nothing was changed") {
				t.Error("dropping the operation did not say nothing changed")
			}
			d.until("a new browse session", func() bool { return d.m.state == browsing && len(d.m.held.letters) == 1 })
			if _, exec := acts.plans(); len(exec) != 0 {
				t.Fatalf("executed %d plans", len(exec))
			}
		})
	}
}

func TestWholeQueueQuarantineAsksTheReasonWhileStillBrowsing(t *testing.T) {
	acts := &fakeActions{whole: 5}
	d, first, _ := wholeDriver(t, Options{}, acts)
	d.send(ctrl(tea.KeyCtrlQ))
	if d.m.mode() != prompting || !strings.Contains(d.m.View(), "Quarantine every message of the queue from orders.dlq: why?") {
		t.Fatalf("ctrl+q did not ask for the reason of a whole-queue quarantine:\n%s", d.m.View())
	}
	if first.isClosed() {
		t.Error("the session closed before the reason was given")
	}
	d.typeText("bad schema")
	d.keys("enter")
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting && d.m.op.kind == confirmPlan })
	reqs, _ := acts.plans()
	if len(reqs) != 1 || reqs[0].Held != nil || reqs[0].Action != ops.Quarantine || reqs[0].Reason != "bad schema" {
		t.Fatalf("plan request = %+v", reqs)
	}
}

func TestWholeQueueOperationsAreRefusedInReadOnlyAndDuringAScan(t *testing.T) {
	d, first, _ := wholeDriver(t, Options{ReadOnly: true}, &fakeActions{whole: 3})
	d.send(ctrl(tea.KeyCtrlR))
	if e := d.errorText(); !strings.Contains(e, "read-only context") {
		t.Errorf("read-only whole replay: %q", e)
	}
	if first.isClosed() {
		t.Error("a refused whole-queue replay closed the session")
	}

	d, _, _ = wholeDriver(t, Options{}, &fakeActions{whole: 3})
	d.m.scan.running = true
	d.send(ctrl(tea.KeyCtrlR))
	if e := d.errorText(); !strings.Contains(e, "a scan of orders.dlq is running") {
		t.Errorf("whole replay during a scan: %q", e)
	}
}

func TestWholeQueueReplayPromptSetsTheCanaryAndThePaceAndAHaltOffersResume(t *testing.T) {
	acts := &fakeActions{whole: 40, halt: "after the canary: 10 of 10 copies failed again, rejected in orders (group 3f2a0c11d9)"}
	d, _, _ := wholeDriver(t, Options{}, acts)
	d.send(ctrl(tea.KeyCtrlR))
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	if v := d.m.View(); !strings.Contains(v, "canary: none (tab: 10 first") || !strings.Contains(v, "ctrl+p: the consumers' pace") {
		t.Fatalf("the prompt does not offer a canary and a pace:\n%s", v)
	}
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	d.send(ctrl(tea.KeyCtrlP))
	if v := d.m.View(); !strings.Contains(v, "canary: 10 first, judged within 30s (the first of them that fails again halts it), then 100, 1000") || !strings.Contains(v, "pace: the destination's consumers'") {
		t.Fatalf("tab and ctrl+p did not set a canary of 10 and the consumers' pace:\n%s", v)
	}
	// At the consumers' pace there is no rate of its own to state.
	if v := d.m.View(); strings.Contains(v, "rate: unlimited") {
		t.Fatalf("the prompt states an unlimited rate beside the consumers' pace:\n%s", v)
	}
	// A canary of 100 for a run of 40 is no canary: tab goes to none.
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	if v := d.m.View(); !strings.Contains(v, "canary: none") {
		t.Fatalf("tab offered a canary larger than the run of 40:\n%s", v)
	}
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	d.keys("y")
	d.until("the halt banner", func() bool { return d.m.op.halted != nil && d.m.state == browsing })
	_, exec := acts.plans()
	if len(exec) != 1 || exec[0].Staging.Canary != 10 || !exec[0].Staging.RateAuto || exec[0].Staging.HaltAt != 0.1 {
		t.Fatalf("ran %+v, want the canary of 10, the default halt share and the consumers' pace", exec[0].Staging)
	}
	v := d.m.View()
	if !strings.Contains(v, "halted after the canary: 10 of 10 copies failed again, rejected in orders (group 3f2a0c11d9)") || !strings.Contains(v, "R resumes it") {
		t.Fatalf("no halt banner naming the failure group and R:\n%s", v)
	}
	if h := helpOf(d.m); !strings.Contains(h, "R resume the halted replay") || strings.Contains(h, "reopen session") {
		t.Errorf("after a halt the help says %q, want R to resume the halted replay", h)
	}
	// R resumes the halted operation, with the prompt asked again.
	acts.halt = ""
	d.keys("R")
	d.until("the resume prompt", func() bool { return d.m.mode() == prompting })
	reqs, _ := acts.plans()
	if last := reqs[len(reqs)-1]; last.Action != ops.Resume || last.Operation != "op-1" || last.Held != nil {
		t.Fatalf("R planned %+v, want a resume of op-1 over the whole queue", last)
	}
	d.keys("y")
	d.until("the banner gone", func() bool { return d.m.op.halted == nil && strings.Contains(d.m.op.result, "resumed op-1") })
	if strings.Contains(d.m.View(), "halted") {
		t.Errorf("the halt banner stays after the resume finished:\n%s", d.m.View())
	}
	if h := helpOf(d.m); strings.Contains(h, "resume") {
		t.Errorf("once resumed the help says %q, still offering a resume", h)
	}
}

// A staging the run would refuse before anything moves (a canary no
// consumer would judge, a pace no consumer sets) is said in the
// question, before the operator confirms; a staging changed again drops
// the warning, and the answer to a check of a staging no longer shown
// is ignored.
func TestTheReplayPromptSaysAStagingTheRunWouldRefuse(t *testing.T) {
	var checked atomic.Int32
	acts := &fakeActions{whole: 400, refuse: func(st ops.Staging) error {
		defer checked.Add(1)
		switch {
		case st.Canary > 0:
			return &ops.StagingRefusal{Kind: actions.ErrCannotJudge, Why: "orders has no consumer, so no copy of the canary would be applied or fail again", Do: "pass --canary-wait 0"}
		case st.RateAuto:
			return &ops.StagingRefusal{Kind: ops.ErrNoPace, Why: "orders has no consumer, so nothing says how fast it can take the copies", Do: "pass --rate N"}
		}
		return nil
	}}
	d, _, _ := wholeDriver(t, Options{}, acts)
	d.send(ctrl(tea.KeyCtrlR))
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	if v := d.m.View(); strings.Contains(v, "would be refused") {
		t.Fatalf("the prompt warns before any staging is chosen:\n%s", v)
	}
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	d.until("the canary's refusal in the question", func() bool {
		return strings.Contains(d.m.View(), "this run would be refused before anything moves: the canary cannot be judged, orders has no consumer")
	})
	if v := d.m.View(); strings.Contains(v, "--canary-wait") {
		t.Errorf("the screen's warning names a command-line flag:\n%s", v)
	}
	// Tab to 100 (refused too), then at once to none: the answer about
	// 100 comes after the canary is gone, and is ignored.
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	d.until("both canaries checked", func() bool { return checked.Load() == 2 })
	d.settle()
	if v := d.m.View(); !strings.Contains(v, "canary: none") || strings.Contains(v, "would be refused") {
		t.Fatalf("a refusal shows once the canary is gone:\n%s", v)
	}
	d.send(ctrl(tea.KeyCtrlP))
	d.until("the pace's refusal", func() bool {
		return strings.Contains(d.m.View(), "the consumers' pace has nothing to follow, orders has no consumer")
	})
	// A run the question says would be refused is not started by y: the
	// prompt stays and says what to change.
	if v := d.m.View(); !strings.Contains(v, "Cannot proceed as it stands: change the pace first (ctrl+p)") || strings.Contains(v, "Proceed? (y goes on") {
		t.Errorf("the prompt of a run that would be refused still offers y:\n%s", v)
	}
	d.keys("y")
	d.settle()
	if _, ran := acts.plans(); len(ran) != 0 || d.m.mode() != prompting {
		t.Fatalf("y started a run the question said would be refused (%d runs, mode %v)", len(ran), d.m.mode())
	}
	// A check that fails is no refusal.
	acts.refuse = func(ops.Staging) error {
		return errors.New("management API at http://127.0.0.1:15672: connection refused")
	}
	d.send(ctrl(tea.KeyCtrlP))
	d.send(ctrl(tea.KeyCtrlP))
	d.until("the failed check", func() bool {
		return strings.Contains(d.m.View(), "could not check the staging (management API at http://127.0.0.1:15672: connection refused)")
	})
	if v := d.m.View(); strings.Contains(v, "would be refused") || strings.Contains(v, "Cannot proceed") || strings.Contains(v, "change the pace first") {
		t.Errorf("a check that failed reads as a refusal:\n%s", v)
	}
	// It warns, and y goes on: the run checks the staging again itself.
	d.keys("y")
	d.until("the run", func() bool { _, ran := acts.plans(); return len(ran) == 1 })
}

// The prompt of a whole-queue replay says what stays of what it read,
// and why; a run no larger than the smallest canary is offered none.
func TestTheWholeQueuePromptSaysWhatStaysAndOffersNoCanaryForASmallRun(t *testing.T) {
	acts := &fakeActions{whole: 30, skip: 27}
	d, _, _ := wholeDriver(t, Options{}, acts)
	d.send(ctrl(tea.KeyCtrlR))
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	v := d.m.View()
	for _, want := range []string{"stay in the DLQ: 27 of the 30 read (27 already applied)", "canary: none (a run of 3 messages is no larger than the smallest canary, 10)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, v)
		}
	}
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	if v := d.m.View(); strings.Contains(v, "canary: 10 first") {
		t.Errorf("tab set a canary of 10 for a run of 3:\n%s", v)
	}
}

func TestStayLineNamesWhatWasNotChosen(t *testing.T) {
	if got, want := stayLine(27, 30, 3, 22, true), "stay in the DLQ: 27 of the 30 read (3 already applied, 22 not matching the filter, 2 as the question notes)"; got != want {
		t.Errorf("stayLine = %q, want %q", got, want)
	}
	if got, want := stayLine(2, 5, 0, 0, false), "stay in the DLQ: 2 of the 5 selected (2 as the question notes)"; got != want {
		t.Errorf("stayLine = %q, want %q", got, want)
	}
}

// On a short terminal a whole-queue prompt keeps the line where the
// answer is typed, and says its details were cut: the operator never
// types blind. A run that would be refused is no answer to type: the
// prompt says so, whole, and offers no field until the refusal is
// gone.
func TestAPromptOnAShortTerminalKeepsWhereTheAnswerIsTyped(t *testing.T) {
	acts := &fakeActions{whole: 400, confirm: ops.Confirm{Phrase: "orders.dlq 400", Why: "production context: type the queue name and the count to confirm"},
		refuse: func(st ops.Staging) error {
			return &ops.StagingRefusal{Kind: actions.ErrCannotJudge, Why: "payments, refunds has no consumer, so no copy of the canary would be applied or fail again"}
		}}
	d, _, _ := wholeDriver(t, Options{}, acts)
	d.m.SetSize(80, 18)
	d.send(ctrl(tea.KeyCtrlR))
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	d.until("the refusal", func() bool {
		return strings.Contains(d.m.View(), "would be refused") || strings.Contains(d.m.View(), "more line")
	})
	v := d.m.View()
	if strings.Contains(v, `type "orders.dlq 400"`) || !strings.Contains(v, "Cannot proceed as it stands: change the canary first (tab)") ||
		!strings.Contains(v, "would be refused before anything moves") {
		t.Errorf("the prompt at 80x18 offers to type the answer to a run it would refuse, or hides why:\n%s", v)
	}
	for _, r := range "orders.dlq 400" {
		d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		if d.m.mode() != prompting {
			t.Fatalf("typing %q into a refused prompt ended it", r)
		}
	}
	d.send(tea.KeyMsg{Type: tea.KeyEnter})
	if d.m.mode() != prompting {
		t.Fatalf("enter ran a refused run")
	}
	if !strings.Contains(v, "a taller terminal shows them") {
		t.Errorf("the prompt at 80x18 does not say its details were cut:\n%s", v)
	}
	if n := len(strings.Split(v, "\n")); n > 18 {
		t.Errorf("%d lines for a height of 18:\n%s", n, v)
	}
}

// On an 80×24 terminal the question has the screen: the notes above the
// table and the legend below give way while it is asked, so it is shown
// whole; the legend comes back once it is answered.
func TestAQuestionTakesTheRoomOfTheScreensNotes(t *testing.T) {
	acts := &fakeActions{whole: 400, confirm: ops.Confirm{Phrase: "orders.dlq 400", Why: "production context: type the queue name and the count to confirm"}}
	d, _, _ := wholeDriver(t, Options{}, acts)
	d.m.notes = []string{"a note the screen shows above the table", "and another one, long enough to wrap at eighty columns on a terminal of that width"}
	d.m.SetSize(80, 19)
	d.send(ctrl(tea.KeyCtrlR))
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	v := d.m.View()
	for _, want := range []string{"→ ", "rate: unlimited", `type "orders.dlq 400"`} {
		if !strings.Contains(v, want) {
			t.Errorf("the question at 80x19 lacks %q:\n%s", want, v)
		}
	}
	for _, gone := range []string{"taller terminal", "a note the screen shows", "* selected ·"} {
		if strings.Contains(v, gone) {
			t.Errorf("the question at 80x19 shares the screen with %q:\n%s", gone, v)
		}
	}
	if n := len(strings.Split(v, "\n")); n > 19 {
		t.Errorf("%d lines for a height of 19:\n%s", n, v)
	}
	d.send(tea.KeyMsg{Type: tea.KeyEsc})
	if v := d.m.View(); !strings.Contains(v, "* selected ·") {
		t.Errorf("the legend does not come back once the question is answered:\n%s", v)
	}
}

// A warning the consumers' pace would answer names the screen's key
// where the prompt offers it, and no command-line flag anywhere.
func TestAWarningNamesTheScreensKeyNotAFlag(t *testing.T) {
	w := "queue orders holds 5 of its max-length 5 (overflow drop-head): the 3 messages going there would push out 3 at its head, dead-lettered; raise its limit, or replay at the consumers' pace" + ops.PaceFlag
	acts := &fakeActions{whole: 30, warnings: []string{w}}
	d, _, _ := wholeDriver(t, Options{}, acts)
	d.send(ctrl(tea.KeyCtrlR))
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	if v := d.m.View(); !strings.Contains(v, "or replay at the consumers' pace (ctrl+p)") || strings.Contains(v, "--rate") {
		t.Errorf("the whole-queue prompt's warning:\n%s", v)
	}
	d.keys("esc")
	d.browsing(1) // the browse opened again after the plan read the queue
	d.keys("r")
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	if v := d.m.View(); !strings.Contains(v, "or replay at the consumers' pace") || strings.Contains(v, "--rate") || strings.Contains(v, "(ctrl+p)") {
		t.Errorf("a held messages' prompt, which offers no pace:\n%s", v)
	}
}

// O, which browses a refused DLQ anyway, says so when nothing was
// refused rather than do nothing silently.
func TestOverrideSaysWhenNothingWasRefused(t *testing.T) {
	d, _, _ := wholeDriver(t, Options{}, &fakeActions{whole: 4})
	d.keys("O")
	if got := d.infoText(); !strings.Contains(got, "nothing to override: warren did not refuse to browse orders.dlq") {
		t.Errorf("O on a browse that was not refused: %q", got)
	}
}

// The halt banner, which offers R, waits while the resume R started is
// planned or runs: the progress says what goes on.
func TestTheHaltBannerWaitsWhileTheResumeRuns(t *testing.T) {
	d, _, _ := wholeDriver(t, Options{}, &fakeActions{whole: 4})
	d.m.op.halted = &halted{operation: "op-1", reason: "after the canary"}
	if !strings.Contains(d.m.View(), "⏸ replay op-1 halted") {
		t.Fatalf("no banner for a halted replay:\n%s", d.m.View())
	}
	for _, md := range []mode{planning, running} {
		d.m.op.mode = md
		if v := d.m.View(); strings.Contains(v, "⏸") {
			t.Errorf("mode %v shows the halt banner:\n%s", md, v)
		}
	}
}
