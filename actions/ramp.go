package actions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/warrenops/warren/domain"
)

// A staged replay (docs/ARCHITECTURE.md §4.13 "Canary, ramp and halt"): the
// walk asks its Gate before each copy. The Ramp publishes a canary of N
// copies, waits for their verdict, then stages ten times larger, each
// judged the same way, and halts the run as soon as too many of a
// stage's copies die again. What judges a copy — the inbox, and the
// dead letters carrying this operation — is an Observer, which the ops
// layer builds from the broker and the inbox.

// Gate is asked before each copy is published: it may wait (a stage's
// verdict, the consumers' pace) and it may halt the run with a
// *HaltError.
type Gate interface {
	Admit(ctx context.Context, c Copy) error
}

// Copy is what a gate knows of a copy about to be published.
type Copy struct {
	LogicalID string
	Dest      Destination
}

// ErrHalted means a staged replay stopped itself: too many copies died
// again, or nothing could judge them. Nothing is rolled back; the
// operation stays open for `dlq resume`.
var ErrHalted = errors.New("halted")

// ErrCannotJudge means a staged replay was refused before anything
// moved: nothing could see its copies die again, nor be applied.
var ErrCannotJudge = errors.New("--canary cannot judge the copies")

// HaltError says why and where a run halted.
type HaltError struct {
	Verdict domain.StageVerdict
	Reason  string
}

func (e *HaltError) Error() string        { return "halted " + e.Reason }
func (e *HaltError) Is(target error) bool { return target == ErrHalted }

// Observer tells what became of the copies of one run.
type Observer interface {
	// Watch gets ready to see copies sent to dest die again; it is
	// called once per destination, before its first copy goes out.
	Watch(ctx context.Context, dest Destination) error
	// Failed counts the copies of this run seen dead again so far;
	// FailedOf how many of ids (a logical ID may repeat) are among them.
	Failed() int
	FailedOf(ids []string) int
	// Applied reports which of ids the inbox reports applied; known is
	// false where no inbox answers.
	Applied(ctx context.Context, ids []string) (applied map[string]bool, known bool)
	// Consumers is how many consumers the destinations watched have;
	// -1 when it cannot be read.
	Consumers(ctx context.Context) int
	// Failure names what the copies with ids died of, for the halt
	// ("NullReferenceException in OrderConsumer (group 3f2a…)"); "" when
	// nothing is known.
	Failure(ids []string) string
	// Lost is non-nil once the observer can no longer see copies die
	// (its connection is gone): nothing it says then is a verdict.
	Lost() error
}

// Pacer spaces copies: Wait returns when the next one, c, may go.
type Pacer interface {
	Wait(ctx context.Context, c Copy) error
}

// DefaultCanaryWait and DefaultHaltAt are the flags' defaults.
const (
	DefaultCanaryWait = 30 * time.Second
	DefaultHaltAt     = 0.10
	// haltSample is the fewest copies of a stage the halt share is taken
	// over: one failure among the first three is no trend.
	haltSample = 20
	judgeEvery = 200 * time.Millisecond
	// askInboxEvery spaces the inbox lookups of a verdict.
	askInboxEvery = 500 * time.Millisecond
)

// Ramp is a Gate that stages a run. Set its fields before the run;
// Record is set by the walk, which writes each verdict to the audit log.
type Ramp struct {
	// Canary is N, the first stage's size; 0 stages nothing (the gate
	// only paces).
	Canary int
	// Wait bounds how long a stage's verdict is awaited; 0 does not
	// wait (each stage is still watched for the halt share).
	Wait time.Duration
	// HaltAt is the share of a stage's copies that may die again before
	// the run halts (the canary allows none).
	HaltAt float64
	Watch  Observer
	Pace   Pacer
	Record func(domain.StageVerdict) error
	// Now and Sleep are the clock; tests set them.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	mu        sync.Mutex
	watched   map[Destination]bool
	stage     int
	size      int // this stage's size; 0: the last, unbounded
	ids       []string
	sent      int
	failedAt  int // failures of the run when this stage began
	verdicts  []domain.StageVerdict
	halted    *HaltError
	judging   bool
	lastShare float64
}

// Status is what a progress line shows of a staged run.
type RampStatus struct {
	Stage     int
	StageSent int
	StageSize int // 0: the last stage, the rest
	Judging   bool
	// Applied and FailedAgain count the run's copies so far: applied as
	// of the last verdict.
	Applied, FailedAgain int
	Verdicts             []domain.StageVerdict
}

// Status reads the ramp's figures.
func (r *Ramp) Status() RampStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := RampStatus{Stage: r.stage, StageSent: len(r.ids), StageSize: r.size, Judging: r.judging,
		Verdicts: append([]domain.StageVerdict(nil), r.verdicts...)}
	for _, v := range r.verdicts {
		st.Applied += v.Applied
	}
	if r.Watch != nil {
		st.FailedAgain = r.Watch.Failed()
	}
	return st
}

// Verdicts are the stages judged so far, and the stage under way.
func (r *Ramp) Verdicts() []domain.StageVerdict {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]domain.StageVerdict(nil), r.verdicts...)
}

// Admit waits for the pace, and, at a stage's end, for its verdict;
// it halts the run when the verdict fails, or as soon as the share of
// this stage's copies that died again passes HaltAt.
func (r *Ramp) Admit(ctx context.Context, c Copy) error {
	if r.Pace != nil {
		if err := r.Pace.Wait(ctx, c); err != nil {
			return err
		}
	}
	if r.Canary <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	if r.halted != nil {
		return r.halted
	}
	if !r.watched[c.Dest] {
		if err := r.Watch.Watch(ctx, c.Dest); err != nil {
			return err
		}
		r.watched[c.Dest] = true
	}
	if err := r.Watch.Lost(); err != nil {
		v := r.verdict(0, 0, false, domain.VerdictNoVerdict, "the witness of the copies was lost ("+err.Error()+"): nothing sees them die again")
		_ = r.record(v)
		return r.halt(v)
	}
	if r.size > 0 && len(r.ids) >= r.size {
		v, ok := r.judge(ctx)
		if !ok {
			// Cancelled while awaiting the verdict: no verdict to record.
			return ctx.Err()
		}
		if err := r.record(v); err != nil {
			return err
		}
		if v.Verdict != domain.VerdictPassed && v.Verdict != domain.VerdictUnjudged {
			return r.halt(v)
		}
		r.next()
	}
	if f := r.stageFailures(); len(r.ids) > 0 && f > r.allowed(max(len(r.ids), min(haltSample, r.stageSizeOr(haltSample)))) {
		// What the inbox says of the stage so far, for the record.
		applied, known := r.Watch.Applied(ctx, r.ids)
		v := r.verdict(f, r.occurrences(applied), known, domain.VerdictHalted, "")
		_ = r.record(v)
		return r.halt(v)
	}
	r.ids = append(r.ids, c.LogicalID)
	r.sent++
	return nil
}

// Finish records the stage under way when the run ends without halting:
// its figures as they stand, unjudged.
func (r *Ramp) Finish(ctx context.Context) error {
	if r.Canary <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	if r.halted != nil || len(r.ids) == 0 {
		return nil
	}
	applied, known := r.Watch.Applied(ctx, r.ids)
	v := r.verdict(r.Watch.FailedOf(r.ids), r.occurrences(applied), known, domain.VerdictUnjudged, "the last stage, closed by the end of the queue: not waited for")
	return r.record(v)
}

func (r *Ramp) init() {
	if r.watched != nil {
		return
	}
	r.watched = map[Destination]bool{}
	r.size = r.Canary
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
}

func (r *Ramp) stageSizeOr(d int) int {
	if r.size > 0 {
		return r.size
	}
	return d
}

// next starts the stage after the one judged: ten times its size.
func (r *Ramp) next() {
	r.stage++
	r.size *= 10
	r.ids = r.ids[:0]
	r.failedAt = r.Watch.Failed()
}

// stageFailures is how many copies died again since this stage began:
// cheap enough to ask before every copy. A late death of an earlier
// stage's copy counts here too, which only halts sooner.
func (r *Ramp) stageFailures() int {
	return max(r.Watch.Failed()-r.failedAt, 0)
}

// allowed is how many of n copies may die again: none of the canary's.
func (r *Ramp) allowed(n int) int {
	if r.stage == 0 {
		return 0
	}
	return int(r.HaltAt * float64(n))
}

// judge waits for the stage's verdict: every copy applied or dead
// again, or Wait spent; it ends early once too many died again. ok is
// false when ctx ended first: there is no verdict.
func (r *Ramp) judge(ctx context.Context) (domain.StageVerdict, bool) {
	if r.Wait <= 0 {
		applied, known := r.Watch.Applied(ctx, r.ids)
		return r.verdict(r.Watch.FailedOf(r.ids), r.occurrences(applied), known, domain.VerdictUnjudged, "--canary-wait 0: not waited for"), true
	}
	if n := r.Watch.Consumers(ctx); n == 0 {
		return r.verdict(r.Watch.FailedOf(r.ids), 0, false, domain.VerdictNoVerdict,
			"no consumer on the destination, so nothing judges the copies: start its consumers and resume, or pass --canary-wait 0"), true
	}
	r.judging = true
	defer func() { r.judging = false }()
	deadline := r.Now().Add(r.Wait)
	applied := map[string]bool{}
	known := false
	lastAsk := time.Time{}
	for {
		if ctx.Err() != nil {
			return domain.StageVerdict{}, false
		}
		if err := r.Watch.Lost(); err != nil {
			return r.verdict(0, 0, false, domain.VerdictNoVerdict, "the witness of the copies was lost ("+err.Error()+"): nothing sees them die again"), true
		}
		failed := r.Watch.FailedOf(r.ids)
		if failed > r.allowed(len(r.ids)) {
			return r.verdict(failed, r.occurrences(applied), known, domain.VerdictHalted, ""), true
		}
		if now := r.Now(); now.Sub(lastAsk) >= askInboxEvery {
			lastAsk = now
			var waiting []string
			for _, id := range r.ids {
				if !applied[id] {
					waiting = append(waiting, id)
				}
			}
			got, ok := r.Watch.Applied(ctx, waiting)
			known = known || ok
			for id := range got {
				applied[id] = true
			}
		}
		done := known && r.occurrences(applied)+failed >= len(r.ids)
		if done || !r.Now().Before(deadline) {
			return r.conclude(failed, r.occurrences(applied), known), true
		}
		r.mu.Unlock()
		err := r.Sleep(ctx, judgeEvery)
		r.mu.Lock()
		if err != nil {
			continue // the ctx check above ends it
		}
	}
}

// conclude is the verdict once every copy is judged or the wait is
// spent. The canary passes only with every copy applied (where an inbox
// answers); a later stage, whose thousands the consumers may still be
// working through, passes once its deaths are within the share and the
// consumers are applying its copies.
func (r *Ramp) conclude(failed, applied int, known bool) domain.StageVerdict {
	pending := len(r.ids) - applied - failed
	switch {
	case failed > r.allowed(len(r.ids)):
		return r.verdict(failed, applied, known, domain.VerdictHalted, "")
	case known && pending > 0 && (r.stage == 0 || applied == 0):
		return r.verdict(failed, applied, known, domain.VerdictHalted, fmt.Sprintf("%d not applied after %s", pending, r.Wait))
	case known && pending > 0:
		return r.verdict(failed, applied, known, domain.VerdictPassed,
			fmt.Sprintf("%d applied within %s and the consumers go on with the rest", applied, r.Wait))
	case known:
		return r.verdict(failed, applied, known, domain.VerdictPassed, "every copy applied")
	}
	return r.verdict(failed, 0, false, domain.VerdictPassed,
		fmt.Sprintf("none died again within %s; no inbox to say they were applied", r.Wait))
}

// occurrences counts the stage's copies whose logical ID is applied: a
// logical ID that two messages share counts twice.
func (r *Ramp) occurrences(applied map[string]bool) int {
	if len(applied) == 0 {
		return 0
	}
	n := 0
	for _, id := range r.ids {
		if applied[id] {
			n++
		}
	}
	return n
}

// verdict is the stage's figures with v.
func (r *Ramp) verdict(failed, applied int, known bool, verdict, why string) domain.StageVerdict {
	n := len(r.ids)
	v := domain.StageVerdict{Stage: r.stage, Size: n, Applied: applied, FailedAgain: failed, Verdict: verdict, Why: why}
	v.Pending = max(n-applied-failed, 0)
	if !known {
		v.Applied = 0
	}
	return v
}

func (r *Ramp) record(v domain.StageVerdict) error {
	r.verdicts = append(r.verdicts, v)
	if r.Record == nil {
		return nil
	}
	return r.Record(v)
}

// halt ends the run on v: "after the canary: 10 of 10 copies failed
// again, RuntimeException in OrderConsumer (group 3f2a…)".
func (r *Ramp) halt(v domain.StageVerdict) error {
	reason := fmt.Sprintf("after %s: %d of %d copies failed again", v.Name(), v.FailedAgain, v.Size)
	if v.Verdict == domain.VerdictNoVerdict || (v.FailedAgain == 0 && v.Why != "") {
		reason = fmt.Sprintf("after %s: %s", v.Name(), v.Why)
	}
	if v.FailedAgain > 0 {
		if f := r.Watch.Failure(r.ids); f != "" {
			reason += ", " + f
		}
	}
	r.halted = &HaltError{Verdict: v, Reason: reason}
	return r.halted
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
