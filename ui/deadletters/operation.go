package deadletters

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/progress"
	"github.com/warrenops/warren/ui/components/prompt"
)

// operation is a replay or a quarantine from its first question to its
// result: the prompt (a reason, then the plan to confirm), the plan being
// made, the run with its progress and its cancel, and what it did. The
// question whether to browse a refused DLQ anyway is asked the same way.
type operation struct {
	*env
	mode   mode // normal, prompting, planning or running
	id     int64
	prompt prompt.Model
	kind   promptKind
	reason string
	action ops.Action
	plan   *ops.Plan
	// whole is set for an operation on the whole queue: the browse
	// session was closed for it, and reopens when it ends.
	whole bool
	// askedWhole is set while the reason asked is for a whole-queue
	// quarantine.
	askedWhole bool
	// planStop cancels the plan being made (a whole-queue plan reads the
	// queue).
	planStop context.CancelFunc
	// progress is shown while running; stop cancels the run's context,
	// and stopping is set once the operator asked, until the result.
	progress progress.Model
	stop     context.CancelFunc
	stopping bool
	result   string
	// halted is the replay that halted itself, until a resume takes it
	// up: the screen's banner, and R resumes it.
	halted *halted
	// stage numbers the staging the prompt shows; refused is what
	// CheckStaging said of it, "" while unknown or fine.
	stage   int64
	refused string
	// blocked is what to change before the run can go on, while the
	// staging shown would be refused; "" when it would not be.
	blocked string
	// beyond is how many more messages the queue held, when opened,
	// than the held ones a plan of held messages acts on.
	beyond int
	// exportPath is the file an export was asked to write.
	exportPath string
}

// halted is a staged replay that stopped itself.
type halted struct {
	operation, reason string
}

// promptKind is the question the prompt asks.
type promptKind int

const (
	askReason promptKind = iota
	confirmPlan
	confirmOverride
	askExportFile
)

// wants is what an answer or a result asks of the screen.
type wants int

const (
	nothing        wants = iota
	planQuarantine       // the reason is given: plan with it
	reopenAnyway         // browse the refused DLQ, allowing the risk
	reload               // the run ended: the held messages changed
	reopen               // a whole-queue operation ended: browse again
	exportTo             // the file is named: check it, then export
)

func newOperation(e *env) *operation { return &operation{env: e} }

// Update handles the keys while the operation holds them, and the
// operation's messages; an answer nobody waits for is dropped by its ID.
func (o *operation) Update(msg tea.Msg) (tea.Cmd, wants) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if o.mode == prompting {
			return o.answer(msg)
		}
		return o.busyKey(msg)
	case planMsg:
		return o.planned(msg)
	case stagingMsg:
		o.stagingChecked(msg)
		return nil, nothing
	case progressMsg:
		return o.progressed(msg), nothing
	case resultMsg:
		return o.finished(msg)
	}
	return nil, nothing
}

// ask puts a question to the operator.
func (o *operation) ask(kind promptKind, q prompt.Question) {
	o.askedWhole = false
	o.prompt = prompt.New(q, o.st)
	o.prompt.SetWidth(o.width)
	o.kind = kind
	o.mode = prompting
}

// start asks the plan for req; its answer comes back as a planMsg. A
// whole-queue request first closes the browse session s, so every
// message it held is back in the queue before the preview reads it.
func (o *operation) start(req ops.Scope, s ops.Session) tea.Cmd {
	o.id = nextID()
	o.mode = planning
	o.action = req.Action
	o.whole = req.Held == nil
	ctx, stop := context.WithCancel(o.ctx)
	o.planStop = stop
	return planCmd(ctx, o.deps.Actions, req, s, o.id)
}

// ended is what the screen is asked once the operation is over without
// a run, or after one: a whole-queue operation browses again.
func (o *operation) ended(held wants) wants {
	if o.planStop != nil {
		o.planStop()
		o.planStop = nil
	}
	if o.whole {
		o.whole = false
		return reopen
	}
	return held
}

func (o *operation) setWidth(w int) {
	o.prompt.SetWidth(w)
	o.progress.SetWidth(w)
}

func (o *operation) answer(k tea.KeyMsg) (tea.Cmd, wants) {
	if o.kind == confirmPlan && o.plan != nil && o.plan.CanStage {
		switch {
		case key.Matches(k, o.keys.Canary):
			st := o.plan.Staging
			st.Canary = nextCanary(st.Canary)
			if st.Canary >= o.plan.Publish {
				// A canary as large as the run is no canary: none.
				st.Canary = 0
			}
			return o.restage(st), nothing
		case key.Matches(k, o.keys.Pace):
			st := o.plan.Staging
			st.RateAuto = !st.RateAuto
			return o.restage(st), nothing
		}
	}
	var d prompt.Decision
	var cmd tea.Cmd
	o.prompt, d, cmd = o.prompt.Update(k)
	switch d {
	case prompt.Cancelled:
		o.mode = normal
		release := closePlan(o.plan)
		o.plan = nil
		return tea.Batch(common.Info("cancelled: nothing was changed"), release), o.ended(nothing)
	case prompt.Confirmed:
		o.mode = normal
		switch o.kind {
		case askReason:
			o.reason = o.prompt.Value()
			return nil, planQuarantine
		case confirmOverride:
			return nil, reopenAnyway
		case confirmPlan:
			return o.execute(), nothing
		case askExportFile:
			o.exportPath = o.prompt.Value()
			return nil, exportTo
		}
	}
	return cmd, nothing
}

// busyKey answers a key the list did not take while a plan is made or
// a run goes on.
func (o *operation) busyKey(k tea.KeyMsg) (tea.Cmd, wants) {
	switch {
	case o.mode == planning && key.Matches(k, o.keys.Cancel):
		// The plan touches nothing: stopping it and dropping its answer
		// is enough (a preview gives back what it read).
		o.mode, o.id = normal, nextID()
		return common.Info("cancelled: nothing was changed"), o.ended(nothing)
	case o.mode == running && key.Matches(k, o.keys.Stop):
		o.cancel()
		return nil, nothing
	case o.mode == running:
		return common.ReportError(fmt.Errorf("an operation on %s is in progress; wait for its result or press x to cancel it", o.ref.Name)), nothing
	}
	return common.ReportError(fmt.Errorf("an operation on %s is being planned; wait for the prompt or press esc", o.ref.Name)), nothing
}

func (o *operation) planned(msg planMsg) (tea.Cmd, wants) {
	if msg.op != o.id || o.mode != planning {
		return closePlan(msg.plan), nothing
	}
	o.mode = normal
	if msg.err != nil {
		return common.ReportError(fmt.Errorf("planning the %s of %s failed: %w", o.action, o.ref.Name, msg.err)), o.ended(nothing)
	}
	p := msg.plan
	if p.Idle() {
		return tea.Batch(common.Info(p.Summary), closePlan(p)), o.ended(nothing)
	}
	o.plan = p
	o.stage, o.refused, o.blocked = nextID(), "", ""
	o.ask(confirmPlan, o.planQuestion(p))
	return nil, nothing
}

// canarySizes are the canaries tab cycles through.
var canarySizes = []int{0, 10, 100}

func nextCanary(n int) int {
	for i, c := range canarySizes {
		if c == n {
			return canarySizes[(i+1)%len(canarySizes)]
		}
	}
	return 0
}

// restage changes how the confirmed plan's run goes out and redraws the
// question; what the operator typed stays.
func (o *operation) restage(st ops.Staging) tea.Cmd {
	if st.Canary > 0 && st.CanaryWait == 0 && st.HaltAt == 0 {
		st.CanaryWait, st.HaltAt = ops.DefaultStaging.CanaryWait, ops.DefaultStaging.HaltAt
	}
	if err := o.plan.Stage(st); err != nil {
		return common.ReportError(err)
	}
	o.stage, o.refused, o.blocked = nextID(), "", ""
	o.prompt.SetQuestion(o.planQuestion(o.plan))
	c, ok := o.deps.Actions.(StagingChecker)
	if !ok || !st.Active() {
		return nil
	}
	return checkStagingCmd(o.ctx, c, o.plan, st, o.stage)
}

// stagingChecked shows, in the question still asked, that the run would
// refuse the staging it shows: the operator changes it before
// confirming rather than learn it after.
func (o *operation) stagingChecked(msg stagingMsg) {
	if msg.stage != o.stage || o.mode != prompting || o.kind != confirmPlan || o.plan == nil || msg.err == nil {
		return
	}
	var sr *ops.StagingRefusal
	switch {
	case errors.As(msg.err, &sr) && errors.Is(sr, ops.ErrNoPace):
		o.refused = "this run would be refused before anything moves: the consumers' pace has nothing to follow, " + sr.Why + " (ctrl+p: as fast as confirms allow)"
		o.blocked = "change the pace first (ctrl+p)"
	case errors.As(msg.err, &sr):
		o.refused = "this run would be refused before anything moves: the canary cannot be judged, " + sr.Why + " (tab changes the canary)"
		o.blocked = "change the canary first (tab)"
	default:
		o.refused = "could not check the staging (" + msg.err.Error() + "); the run checks it again before anything moves"
	}
	o.prompt.SetQuestion(o.planQuestion(o.plan))
}

// stayLine says how many of the messages the plan took stay, and why:
// of those the operator selected, or of those a whole-queue plan read.
// Those neither applied nor left out by the filter stay for a reason
// the question's notes give (quarantined, no destination, …).
func stayLine(left, of, applied, filtered int, whole bool) string {
	what := "selected"
	if whole {
		what = "read"
	}
	var why []string
	if applied > 0 {
		why = append(why, fmt.Sprintf("%d already applied", applied))
	}
	if filtered > 0 {
		why = append(why, fmt.Sprintf("%d not matching the filter", filtered))
	}
	if other := left - applied - filtered; other > 0 {
		why = append(why, fmt.Sprintf("%d as the question notes", other))
	}
	return fmt.Sprintf("stay in the DLQ: %d of the %d %s (%s)", left, of, what, strings.Join(why, ", "))
}

// stagingDetails are the prompt's lines on the canary and the pace, with
// the keys that change them; a run of moving messages no larger than the
// smallest canary is offered none.
func stagingDetails(st ops.Staging, moving int) []string {
	canary := "canary: none (tab: 10 first, then stages ten times larger, each judged)"
	if moving <= canarySizes[1] {
		canary = fmt.Sprintf("canary: none (a run of %s is no larger than the smallest canary, %d)", format.Messages(moving), canarySizes[1])
	}
	if st.Canary > 0 {
		canary = fmt.Sprintf("canary: %d first, judged within %s (the first of them that fails again halts it), then %d, %d, …; halt above %.0f%% failed again (tab: %s)",
			st.Canary, st.CanaryWait, st.Canary*10, st.Canary*100, st.HaltAt*100, canaryWord(nextCanary(st.Canary)))
	}
	pace := "pace: as fast as confirms allow (ctrl+p: the consumers' pace)"
	if st.RateAuto {
		pace = "pace: the destination's consumers', its depth held where it starts (ctrl+p: unlimited)"
	}
	return []string{canary, pace}
}

func canaryWord(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// stageNote is the progress's line on a staged or paced run: "canary
// 7/10 · 3 applied · 0 failed again · pace 140/s: consumers take 141/s
// net (API: ack 180/s, arrivals 40/s) · depth 12, 0 at the start".
func stageNote(p ops.Progress) string {
	var parts []string
	if st := p.StageText(); st != "" {
		parts = append(parts, st, fmt.Sprintf("%d applied", p.Applied), fmt.Sprintf("%d failed again", p.FailedAgain))
	}
	if p.PaceWhy != "" {
		parts = append(parts, p.PaceWhy)
	}
	if b := p.BlockedText(); b != "" {
		parts = append(parts, b)
	}
	return sanitize.Text(strings.Join(parts, " · "))
}

func (o *operation) planQuestion(p *ops.Plan) prompt.Question {
	q := prompt.Question{Title: title(p.Action), Text: sanitize.Text(p.Summary)}
	for _, d := range p.Destinations {
		q.Details = append(q.Details, fmt.Sprintf("→ %s: %s", sanitize.Text(d.Name), format.Messages(d.Count)))
	}
	if o.beyond > 0 && !o.whole {
		whole := o.keys.ReplayAll
		if p.Action == ops.Quarantine {
			whole = o.keys.QuarantineAll
		}
		q.Details = append(q.Details, fmt.Sprintf("not in this %s: the %d more in %s beyond the held messages (%s: the whole queue)",
			p.Action, o.beyond, sanitize.Text(p.Queue.Name), whole.Help().Key))
	}
	if left := p.Selected - p.Publish; left > 0 {
		q.Details = append(q.Details, stayLine(left, p.Selected, p.SkippedApplied, p.Filtered, o.whole))
	}
	if !p.Staging.RateAuto {
		// At the consumers' pace, the pace line below says the rate.
		r := "unlimited"
		if p.Rate > 0 {
			r = format.Rate(p.Rate) + " msg/s"
		}
		q.Details = append(q.Details, "rate: "+r) // the size is in the summary
	}
	if p.CanStage {
		q.Details = append(q.Details, stagingDetails(p.Staging, p.Publish)...)
	}
	var warn []string
	if o.refused != "" {
		warn = append(warn, sanitize.Message(o.refused))
	}
	for _, w := range p.Warnings {
		if cut, ok := strings.CutSuffix(w, ops.PaceFlag); ok {
			// The screen's key, where this prompt offers it.
			w = cut
			if p.CanStage {
				w += " (" + o.keys.Pace.Help().Key + ")"
			}
		}
		warn = append(warn, sanitize.Text(w))
	}
	if w := p.Confirm.Warning(); w != "" {
		warn = append(warn, w)
		q.TypeToConfirm = p.Confirm.Phrase
	}
	q.Warning = strings.Join(warn, "; ")
	q.Blocked = o.blocked
	return q
}

func (o *operation) execute() tea.Cmd {
	o.mode = running
	o.id = nextID()
	o.result = ""
	o.progress = progress.New(title(o.plan.Action)+" in progress", o.plan.Publish, o.opts.Now(), o.st)
	o.progress.SetWidth(o.width)
	ctx, stop := context.WithCancel(o.ctx)
	o.stop, o.stopping = stop, false
	ch := make(chan ops.Progress, 64)
	return tea.Batch(executeCmd(ctx, o.life, o.deps.Actions, o.plan, o.id, ch), waitProgress(ch, o.id))
}

// cancel stops the run: it stops sending, settles what is in flight,
// and its result says what moved and what stayed.
func (o *operation) cancel() {
	if o.stopping || o.stop == nil {
		return
	}
	o.stopping = true
	o.stop()
	if o.action == actionExport {
		o.progress.SetTitle("Export cancelling… every message goes back, and no file is written")
		return
	}
	o.progress.SetTitle(title(o.plan.Action) + " cancelling… no more messages are sent; settling those in flight")
}

func (o *operation) progressed(msg progressMsg) tea.Cmd {
	if msg.op != o.id || o.mode != running {
		return nil
	}
	p := msg.p
	o.progress.Set(progress.Counts{Total: p.Total, Done: p.Done, Confirmed: p.Confirmed, Returned: p.Returned, Nacked: p.Nacked, Unknown: p.Unknown}, p.At)
	o.progress.SetNote(stageNote(p))
	return waitProgress(msg.ch, msg.op)
}

// ran ends the run: the mode is normal again and the run's context is
// released. It reports whether the operator had asked it to stop.
func (o *operation) ran() (stopping bool) {
	o.mode = normal
	if o.stop != nil {
		o.stop() // releases the run's context
	}
	stopping = o.stopping
	o.stop, o.stopping = nil, false
	return stopping
}

func (o *operation) finished(msg resultMsg) (tea.Cmd, wants) {
	if msg.op != o.id || o.mode != running {
		return nil, nothing
	}
	o.ran()
	r := msg.res
	switch {
	case r.Halted:
		o.halted = &halted{operation: r.Operation, reason: r.HaltReason}
	case o.plan.Action == ops.Resume && o.halted != nil && r.Operation == o.halted.operation && msg.err == nil:
		o.halted = nil
	}
	o.result = format.Outcome(string(o.plan.Action), sanitize.Text(o.ref.Name), r.Counts)
	for _, n := range r.Notes {
		o.result += " · " + n
	}
	o.result += format.AuditHead(r.AuditHead)
	if r.Halted {
		// The banner says it: the halt is no failure of warren's. What
		// else went wrong (its records not written) is.
		if msg.err != nil && msg.err.Error() != "halted "+r.HaltReason {
			o.result += " — " + msg.err.Error()
			return common.ReportError(fmt.Errorf("%s of %s halted, and: %w; see the audit log (A)", o.plan.Action, o.ref.Name, msg.err)), o.ended(reload)
		}
		return common.Info(fmt.Sprintf("%s %s halted: R resumes it once the consumer is fixed", title(o.plan.Action), r.Operation)), o.ended(reload)
	}
	if msg.err != nil {
		o.result += " — failed: " + msg.err.Error()
		return common.ReportError(fmt.Errorf("%s of %s failed: %w; messages without a confirm stay in the DLQ, see the audit log (A)", o.plan.Action, o.ref.Name, msg.err)), o.ended(reload)
	}
	// The counts stay under the table; the root's message line says only
	// that the operation ended and where its counts and records are, so
	// the screen does not show the same line twice.
	return common.Info(fmt.Sprintf("%s %s%s: the counts are under the table, every record in the audit log (A)",
		title(o.plan.Action), r.Operation, ended(r.Cancelled))), o.ended(reload)
}

func ended(cancelled bool) string {
	if cancelled {
		return " cancelled"
	}
	return " finished"
}

func title(a ops.Action) string {
	if a == "" {
		return ""
	}
	return strings.ToUpper(string(a[:1])) + string(a[1:])
}

func verb(a ops.Action) string {
	if a == ops.Replay {
		return "replaying"
	}
	return "quarantining"
}
