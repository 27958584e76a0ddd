package deadletters

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

func browsingDriver(t *testing.T, opts Options, acts *fakeActions) (*driver, *fakeSession) {
	t.Helper()
	s := newSession(ops.Page{Letters: sampleLetters()})
	deps := Deps{
		Browser: &fakeBrowser{sessions: []*fakeSession{s}},
		Inbox:   fakeInbox{applied: map[string]time.Time{"ev-1": t0.Add(-time.Hour)}},
	}
	if acts != nil {
		deps.Actions = acts
	}
	d := newDriver(t, deps, opts)
	d.browsing(4)
	return d, s
}

func selectedIDs(m *Model) []string {
	var ids []string
	for _, l := range m.held.letters {
		if m.held.list.IsSelected(l.Position) {
			ids = append(ids, l.LogicalID)
		}
	}
	return ids
}

func TestSelection(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{name: "space selects the row under the cursor", keys: []string{"space"}, want: "ev-1"},
		{name: "space on another row adds it", keys: []string{"space", "down", "down", "space"}, want: "ev-1,ev-3"},
		{name: "space again deselects", keys: []string{"space", "space"}, want: ""},
		{name: "select all matching without a filter takes every row", keys: []string{"*"}, want: "ev-1,9f86d081,ev-3,ev-4"},
		{name: "select all matching twice clears", keys: []string{"*", "*"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := browsingDriver(t, Options{}, nil)
			d.keys(tt.keys...)
			if got := strings.Join(selectedIDs(d.m), ","); got != tt.want {
				t.Errorf("selected %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSelectAllMatchingTakesOnlyTheFilteredRows(t *testing.T) {
	d, _ := browsingDriver(t, Options{}, nil)
	d.keys("/")
	d.typeText(`reason == "rejected"`)
	d.keys("enter", "*")
	if got := strings.Join(selectedIDs(d.m), ","); got != "ev-1,9f86d081" {
		t.Fatalf("selected %q, want the two rejected messages", got)
	}
	if info := d.infoText(); !strings.Contains(info, `selected 2 messages matching reason == "rejected"`) {
		t.Errorf("info = %q", info)
	}
	if v := d.m.View(); !strings.Contains(v, "(2 of 4 match)") || !strings.Contains(v, "2 selected") {
		t.Errorf("view does not show the filter and the selection:\n%s", v)
	}
}

func TestSelectionOutlivesTheFilter(t *testing.T) {
	d, _ := browsingDriver(t, Options{}, nil)
	d.keys("down", "down", "space", "/")
	d.typeText(`reason == "rejected"`)
	d.keys("enter", "*", "*")
	if got := strings.Join(selectedIDs(d.m), ","); got != "ev-3" {
		t.Fatalf("selected %q, want the hidden ev-3 kept after selecting and clearing the matching rows", got)
	}
	if v := d.m.View(); !strings.Contains(v, "1 selected") {
		t.Errorf("the header does not count the hidden selection:\n%s", v)
	}
}

func TestFilterErrorsAreShown(t *testing.T) {
	tests := []struct {
		name        string
		expr        string
		wantMode    mode
		wantVisible int
		wantErr     string
	}{
		{name: "a bad expression keeps the input open with the error", expr: "bogus", wantMode: filtering, wantVisible: 4, wantErr: "filter error: unknown name bogus"},
		{name: "an error while matching is shown and hides the rows", expr: "header(x) > 1", wantMode: normal, wantVisible: 0, wantErr: "filter error: on message m-ev-1: invalid operation"},
		{name: "the inbox status takes part in filters", expr: "applied == false", wantMode: normal, wantVisible: 2},
		{name: "an empty expression clears the filter", expr: "", wantMode: normal, wantVisible: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := browsingDriver(t, Options{}, nil)
			d.keys("/")
			if !d.m.Capturing() {
				t.Fatal("the filter input must capture keys")
			}
			d.typeText(tt.expr)
			d.keys("enter")
			if d.m.mode() != tt.wantMode || len(d.m.held.visible) != tt.wantVisible {
				t.Fatalf("mode %v visible %d, want mode %v visible %d", d.m.mode(), len(d.m.held.visible), tt.wantMode, tt.wantVisible)
			}
			v := d.m.View()
			if tt.wantErr != "" && !strings.Contains(v, tt.wantErr) {
				t.Errorf("view lacks %q:\n%s", tt.wantErr, v)
			}
			if tt.wantErr == "" && strings.Contains(v, "filter error") {
				t.Errorf("unexpected filter error:\n%s", v)
			}
		})
	}
}

func TestActionsAreRefusedInReadOnly(t *testing.T) {
	for _, k := range []string{"r", "Q"} {
		t.Run(k, func(t *testing.T) {
			acts := &fakeActions{}
			d, _ := browsingDriver(t, Options{ReadOnly: true}, acts)
			d.keys("space", k)
			if e := d.errorText(); !strings.Contains(e, "read-only context") {
				t.Errorf("error = %q, want a read-only refusal", e)
			}
			if reqs, _ := acts.plans(); len(reqs) != 0 || d.m.mode() != normal {
				t.Errorf("read-only still planned %d actions (mode %v)", len(reqs), d.m.mode())
			}
			for _, b := range d.m.Keys().ShortHelp() {
				if b.Help().Desc == "replay" || b.Help().Desc == "quarantine" {
					t.Errorf("read-only help still offers %q", b.Help().Desc)
				}
			}
		})
	}
}

func TestReplayPrompt(t *testing.T) {
	prod := ops.Confirm{Phrase: "orders.dlq 2", Why: "production context"}
	tests := []struct {
		name        string
		confirm     ops.Confirm
		answer      []string
		typed       string
		wantExec    bool
		wantCapture bool
	}{
		{name: "y confirms a small selection", answer: []string{"y"}, wantExec: true},
		{name: "n cancels and nothing moves", answer: []string{"n"}},
		{name: "esc cancels and nothing moves", answer: []string{"esc"}},
		{name: "prod needs the queue name and count typed", confirm: prod, typed: "orders.dlq 2", answer: []string{"enter"}, wantExec: true, wantCapture: true},
		{name: "prod does not accept y", confirm: prod, answer: []string{"y", "enter"}, wantCapture: true},
		{name: "prod does not accept a wrong count", confirm: prod, typed: "orders.dlq 3", answer: []string{"enter"}, wantCapture: true},
		{name: "a selection above the threshold needs typing", confirm: ops.Confirm{Phrase: "orders.dlq 2", Why: "more than 1 message"}, typed: "orders.dlq 2", answer: []string{"enter"}, wantExec: true, wantCapture: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acts := &fakeActions{confirm: tt.confirm}
			d, _ := browsingDriver(t, Options{}, acts)
			d.keys("space", "down", "space", "r")
			d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
			v := d.m.View()
			if !strings.Contains(v, "replay 2 messages from orders.dlq to queue orders (default exchange)") {
				t.Errorf("prompt does not state the plan:\n%s", v)
			}
			if tt.wantCapture != d.m.op.prompt.Capturing() || !d.m.Capturing() {
				t.Errorf("prompt capturing = %v, want %v", d.m.op.prompt.Capturing(), tt.wantCapture)
			}
			d.typeText(tt.typed)
			d.keys(tt.answer...)
			if !tt.wantExec {
				if _, exec := acts.plans(); len(exec) != 0 {
					t.Fatalf("executed %d plans without confirmation", len(exec))
				}
				return
			}
			d.until("the result", func() bool { return d.m.mode() == normal && d.m.op.result != "" })
			if _, exec := acts.plans(); len(exec) != 1 || exec[0].Selected != 2 {
				t.Fatalf("executed %v, want one plan of 2", exec)
			}
			d.until("the held letters to refresh", func() bool { return len(d.m.held.letters) == 2 })
			if !strings.Contains(d.m.View(), "replay op-1: 2 selected, 0 skipped as applied, 2 confirmed") {
				t.Errorf("no result summary:\n%s", d.m.View())
			}
			if !strings.Contains(d.m.op.result, "· audit head seq 7 sha256:9f86d081") {
				t.Errorf("the result does not end with the audit head: %s", d.m.op.result)
			}
		})
	}
}

func TestQuarantineAsksForAReasonFirst(t *testing.T) {
	acts := &fakeActions{}
	d, _ := browsingDriver(t, Options{}, acts)
	d.keys("Q")
	if d.m.mode() != prompting || d.m.op.kind != askReason {
		t.Fatalf("Q did not ask for a reason (mode %v)", d.m.mode())
	}
	d.keys("enter")
	if !strings.Contains(d.m.View(), "Reason cannot be empty") {
		t.Errorf("an empty reason was not refused:\n%s", d.m.View())
	}
	d.typeText("poison payload")
	d.keys("enter")
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting && d.m.op.kind == confirmPlan })
	reqs, _ := acts.plans()
	if len(reqs) != 1 || reqs[0].Action != ops.Quarantine || reqs[0].Reason != "poison payload" || len(reqs[0].Letters) != 1 {
		t.Fatalf("plan requests = %+v", reqs)
	}
	d.keys("y")
	d.until("the result", func() bool { return d.m.op.result != "" })
}

func TestEscWhilePlanningDropsThePlan(t *testing.T) {
	d, _ := browsingDriver(t, Options{}, &fakeActions{})
	d.keys("r")
	op := d.m.op.id
	d.keys("esc")
	if d.m.mode() != normal || !strings.Contains(d.infoText(), "cancelled") {
		t.Fatalf("mode %v after esc while planning", d.m.mode())
	}
	d.m.Update(planMsg{op: op, plan: &ops.Plan{Action: ops.Replay, Decided: true, Selected: 1, Publish: 1, Summary: "late"}})
	if d.m.mode() != normal {
		t.Errorf("a cancelled plan still opened the prompt")
	}
}

func TestPlanWithEverythingAppliedDoesNotPrompt(t *testing.T) {
	acts := &fakeActions{skip: 10}
	d, _ := browsingDriver(t, Options{}, acts)
	d.keys("r")
	d.until("the plan", func() bool { return d.m.mode() == normal })
	if !strings.Contains(d.infoText(), "replay 0 messages from orders.dlq") {
		t.Errorf("info = %q", d.infoText())
	}
}

// replaying is a browsing screen running a replay of four messages: its
// operation's number and the channel its progress comes on.
func replaying(t *testing.T) (*driver, int64, chan ops.Progress) {
	t.Helper()
	d, _ := browsingDriver(t, Options{}, &fakeActions{})
	d.m.op.plan = &ops.Plan{Action: ops.Replay, Decided: true, Selected: 4, Publish: 4}
	d.m.op.execute()
	return d, d.m.op.id, make(chan ops.Progress)
}

func TestProgressUpdates(t *testing.T) {
	d, op, ch := replaying(t)
	steps := []ops.Progress{
		{Total: 4, Done: 1, Confirmed: 1, At: t0.Add(time.Second)},
		{Total: 4, Done: 3, Confirmed: 2, Returned: 1, At: t0.Add(2 * time.Second)},
	}
	for _, p := range steps {
		_, cmd := d.m.Update(progressMsg{op: op, p: p, ch: ch})
		if cmd == nil {
			t.Fatal("progress did not re-arm the wait for the next figure")
		}
	}
	v := d.m.View()
	for _, want := range []string{"Replay in progress", "3/4", "1.5/s", "confirmed 2  returned 1  nacked 0  unknown 0"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if !d.m.Capturing() {
		t.Error("a running operation must keep esc from popping the screen")
	}
}

// A run the broker blocks (a resource alarm) says so on the progress,
// with the broker's reason made safe, and stops saying so once it clears.
func TestABlockedRunSaysWhyItDoesNotMove(t *testing.T) {
	d, op, ch := replaying(t)
	blocked := ops.Progress{Total: 4, Done: 1, Confirmed: 1, At: t0.Add(20 * time.Second),
		Blocked: "low on memory\x1b]0;owned\x07", BlockedSince: t0.Add(5 * time.Second)}
	d.m.Update(progressMsg{op: op, p: blocked, ch: ch})
	v := d.m.View()
	if !strings.Contains(v, "publishing blocked by the broker for 15s (low on memory") || strings.Contains(v, "\x1b]0;") {
		t.Errorf("the view of a blocked run:\n%s", v)
	}
	cleared := ops.Progress{Total: 4, Done: 2, Confirmed: 2, At: t0.Add(21 * time.Second)}
	d.m.Update(progressMsg{op: op, p: cleared, ch: ch})
	if v := d.m.View(); strings.Contains(v, "blocked") {
		t.Errorf("the block cleared, the view still says it:\n%s", v)
	}
}

func TestStaleResultsAreDropped(t *testing.T) {
	d, first := browsingDriver(t, Options{}, &fakeActions{})
	oldSid := d.m.sid
	second := newSession(ops.Page{Letters: sampleLetters()[:1]})
	d.m.deps.Browser = &fakeBrowser{sessions: []*fakeSession{second}}
	d.keys("R")
	d.browsing(1)
	if !first.isClosed() {
		t.Error("reopening did not close the old session")
	}

	stale := []struct {
		name string
		msg  any
	}{
		{"a page of the old session", pageMsg{sid: oldSid, page: ops.Page{Letters: sampleLetters()}}},
		{"inbox answers for the old session", inboxMsg{sid: oldSid, asked: []string{"ev-1"}, err: errors.New("late")}},
		{"the old session's letters", lettersMsg{sid: oldSid, letters: sampleLetters()}},
		{"the old session ending", sessionDoneMsg{sid: oldSid, err: errors.New("closed")}},
		{"a plan nobody waits for", planMsg{op: d.m.op.id + 1000, plan: &ops.Plan{Decided: true, Selected: 1, Summary: "stale"}}},
		{"a result nobody waits for", resultMsg{op: d.m.op.id + 1000, res: ops.Result{Counts: ops.Counts{Operation: "stale"}}}},
	}
	for _, s := range stale {
		d.m.Update(s.msg)
		if len(d.m.held.letters) != 1 || d.m.state != browsing || d.m.mode() != normal || d.m.op.result != "" {
			t.Fatalf("%s changed the screen: letters %d state %v mode %v", s.name, len(d.m.held.letters), d.m.state, d.m.mode())
		}
	}
	if d.m.held.inbox["ev-1"].state != "applied" {
		t.Errorf("a stale inbox answer overwrote the status: %+v", d.m.held.inbox["ev-1"])
	}

	late := newSession()
	d.m.life.adopt(oldSid, late)
	_, cmd := d.m.Update(openedMsg{sid: oldSid, session: late})
	if cmd == nil {
		t.Fatal("a session opened for a superseded browse was not closed")
	}
	cmd()
	if !late.isClosed() {
		t.Error("a session opened for a superseded browse was leaked")
	}
}

func TestSessionDeathIsShownAndCanBeReopened(t *testing.T) {
	acts := &fakeActions{}
	d, s := browsingDriver(t, Options{}, acts)
	second := newSession(ops.Page{Letters: sampleLetters()})
	d.m.deps.Browser = &fakeBrowser{sessions: []*fakeSession{second}}
	s.done <- errors.New("connection reset by peer")
	d.until("the session to die", func() bool { return d.m.state == died })
	if e := d.errorText(); !strings.Contains(e, "browse session on orders.dlq ended (connection reset by peer)") || !strings.Contains(e, "press R to reopen") {
		t.Errorf("error = %q", e)
	}
	if v := d.m.View(); !strings.Contains(v, "Browse session ended: connection reset by peer") {
		t.Errorf("view does not show the dead session:\n%s", v)
	}
	d.keys("r")
	if e := d.errorText(); !strings.Contains(e, "no browse session on orders.dlq") {
		t.Errorf("an action on a dead session was not refused: %q", e)
	}
	d.until("the dead session's connection to close", s.isClosed)
	d.keys("R")
	d.browsing(4)
	if d.m.state != browsing {
		t.Errorf("R did not reopen (state %v)", d.m.state)
	}
}

func TestRefusedQuorumDLQOffersAnExplicitOverride(t *testing.T) {
	s := newSession(ops.Page{Letters: sampleLetters(), Notes: []string{"quorum queue: returned messages may go to the back, order is not kept"}})
	b := &fakeBrowser{sessions: []*fakeSession{s}, err: &domain.RefusedError{
		Reason: "orders.dlq is a quorum queue with delivery-limit 5: each browse costs a delivery",
		Risk:   "messages at their limit will be dropped or dead-lettered again",
	}}
	sc := newScanner(&domain.Stats{}, nil)
	d := newDriver(t, Deps{Browser: b, Scanner: sc}, Options{})
	d.until("the refusal", func() bool { return d.m.state == refused })
	v := d.m.View()
	for _, want := range []string{"Browsing refused: orders.dlq is a quorum queue with delivery-limit 5", "If you browse anyway: messages at their limit", "Press O to browse anyway"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	d.keys("O")
	if !d.m.Capturing() || !strings.Contains(d.m.View(), `type "orders.dlq"`) {
		t.Fatalf("override prompt does not ask for the queue name:\n%s", d.m.View())
	}
	d.typeText("orders.dlq")
	d.keys("enter")
	d.browsing(4)
	if len(b.allowRisk) != 2 || !b.allowRisk[1] {
		t.Errorf("opens = %v, want a second open allowing the risk", b.allowRisk)
	}
	if !strings.Contains(d.m.View(), "! quorum queue: returned messages may go to the back") {
		t.Errorf("page notes are not shown:\n%s", d.m.View())
	}
	// The override covers the whole-queue statistics too.
	d.keys("S")
	d.until("the scan to run", func() bool { return isClosed(sc.started) })
	if len(sc.allowRisk) != 1 || !sc.allowRisk[0] {
		t.Errorf("the scan after the override allowed the risk: %v, want true", sc.allowRisk)
	}
	close(sc.release)
}

func TestTheHeaderCountsDownToTheConsumerTimeoutAndSaysWhyTheSessionEnded(t *testing.T) {
	s := newSession(ops.Page{Letters: sampleLetters()})
	s.deadline, s.why = t0.Add(4*time.Minute), "the queue's x-consumer-timeout"
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}, Inbox: fakeInbox{}}, Options{})
	d.browsing(4)
	if v := d.m.View(); !strings.Contains(v, "returns its messages in 4m, before the queue's x-consumer-timeout would take them") {
		t.Fatalf("the header does not count down to the consumer timeout:\n%s", v)
	}
	d.send(deadlineMsg{sid: d.m.sid, at: t0.Add(3*time.Minute + 30*time.Second)})
	if v := d.m.View(); !strings.Contains(v, "returns its messages in 30s") {
		t.Fatalf("after a tick:\n%s", v)
	}
	// The session gives its messages back and says so.
	s.done <- errors.New("returned its 4 held messages to orders.dlq before the queue's x-consumer-timeout (5m0s) would have taken them and closed the channel")
	d.until("the session's end", func() bool { return d.m.state == died })
	if v := d.m.View(); !strings.Contains(v, "returned its 4 held messages") || !strings.Contains(v, "press R to reopen") || strings.Contains(v, "returns its messages in") {
		t.Fatalf("after the session gave its messages back:\n%s", v)
	}
}

// An override the open then fails on (a read-only context refuses it)
// is not kept for what comes after: not for the whole-queue scan.
func TestAnOverrideTheOpenFailsOnIsNotKept(t *testing.T) {
	b := &fakeBrowser{err: &domain.RefusedError{
		Reason: "orders.dlq is a quorum queue with delivery-limit 5: each browse costs a delivery",
		Risk:   "messages at their limit will be dropped or dead-lettered again",
	}}
	d := newDriver(t, Deps{Browser: b, Scanner: newScanner(&domain.Stats{}, nil)}, Options{})
	d.until("the refusal", func() bool { return d.m.state == refused })
	d.keys("O")
	d.typeText("orders.dlq")
	d.keys("enter")
	d.until("the override's open to fail", func() bool { return d.m.state == failed })
	if d.m.allowRisk {
		t.Error("the override is kept after its open failed")
	}
}

// Every held message selected is not the queue: the question of a plan
// of held messages says how many more the queue holds, and the key that
// acts on all of them.
func TestAPlanOfHeldMessagesSaysWhatTheQueueHoldsBeyondThem(t *testing.T) {
	s := newSession(ops.Page{Letters: sampleLetters(), Depth: 60})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}, Actions: &fakeActions{}}, Options{})
	d.browsing(4)
	d.keys("*", "r")
	d.until("the prompt", func() bool { return d.m.mode() == prompting })
	if v := d.m.View(); !strings.Contains(v, "not in this replay: the 56 more in orders.dlq beyond the held messages (ctrl+r: the whole queue)") {
		t.Errorf("the held replay's question does not say what stays beyond the page:\n%s", v)
	}
	// All read (end of queue): nothing is beyond.
	s = newSession(ops.Page{Letters: sampleLetters(), Depth: 4, End: true})
	d = newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}, Actions: &fakeActions{}}, Options{})
	d.browsing(4)
	d.keys("*", "r")
	d.until("the prompt", func() bool { return d.m.mode() == prompting })
	if v := d.m.View(); strings.Contains(v, "not in this replay") {
		t.Errorf("a replay of the whole held queue says some stay beyond it:\n%s", v)
	}
}
