package ops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/warrenops/warren/actions"
)

// Staging is how a replay goes out (docs/ARCHITECTURE.md §4.13,
// ramp and halt"): a canary of Canary copies judged within CanaryWait,
// stages ten times larger after it, a halt once more than HaltAt of a
// stage's copies die again; RateAuto paces the copies by the
// destination's consumers.
type Staging struct {
	Canary     int
	CanaryWait time.Duration
	HaltAt     float64
	RateAuto   bool
}

// DefaultStaging is a canary's defaults, without one.
var DefaultStaging = Staging{CanaryWait: actions.DefaultCanaryWait, HaltAt: actions.DefaultHaltAt}

// Active reports whether the run is staged or paced at all.
func (s Staging) Active() bool { return s.Canary > 0 || s.RateAuto }

// Validate refuses figures that make no sense.
func (s Staging) Validate() error {
	switch {
	case s.Canary < 0:
		return fmt.Errorf("--canary %d: want 0 (none) or more", s.Canary)
	case s.CanaryWait < 0:
		return fmt.Errorf("--canary-wait %s: want 0 (do not wait) or more", s.CanaryWait)
	case !(s.HaltAt >= 0 && s.HaltAt <= 1): // NaN too
		return fmt.Errorf("--halt-at %g%%: want 0 to 100", s.HaltAt*100)
	}
	return nil
}

// Lines are the staging as the prompt shows it.
func (s Staging) Lines() []string {
	var out []string
	if s.Canary > 0 {
		wait := "not waited for"
		if s.CanaryWait > 0 {
			wait = "judged within " + s.CanaryWait.String()
		}
		out = append(out, fmt.Sprintf("canary: %d first, %s, halted by the first of them that dies again; then stages of %d, %d, … each judged the same; halt when more than %s of a stage dies again",
			s.Canary, wait, s.Canary*10, s.Canary*100, percent(s.HaltAt)))
	}
	if s.RateAuto {
		out = append(out, "pace: the destination's consumers' (--rate auto), its depth held near where it starts")
	}
	return out
}

func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

// detail is what the intent (or a resume's record) keeps of s.
func (s Staging) detail() map[string]string {
	d := map[string]string{}
	if s.Canary > 0 {
		d["canary"] = strconv.Itoa(s.Canary)
		d["canary_wait"] = s.CanaryWait.String()
		d["halt_at"] = strconv.FormatFloat(s.HaltAt, 'f', -1, 64)
	}
	if s.RateAuto {
		d["pace"] = "auto"
	}
	return d
}

// stagingOf reads back what an intent recorded; the zero Staging when
// it recorded none.
func stagingOf(d map[string]string) Staging {
	s := DefaultStaging
	s.Canary, _ = strconv.Atoi(d["canary"])
	if w, err := time.ParseDuration(d["canary_wait"]); err == nil {
		s.CanaryWait = w
	}
	if h, err := strconv.ParseFloat(d["halt_at"], 64); err == nil {
		s.HaltAt = h
	}
	s.RateAuto = d["pace"] == "auto"
	return s
}

// staged is a run's gate and what it holds open.
type staged struct {
	ramp  *actions.Ramp
	watch *watch
	pace  *autoPace
}

// stage opens what a staged run of operation op on t needs: the
// witness, the pacer and the ramp. dests are the destinations known
// before the run (a preview's): each is watched and paced now, so a
// refusal comes before anything is recorded or moved.
func (o *Ops) stage(ctx context.Context, t *Target, s Staging, op, run string, dests []actions.Destination) (*staged, error) {
	g := &staged{ramp: &actions.Ramp{Canary: s.Canary, Wait: s.CanaryWait, HaltAt: s.HaltAt}}
	if s.Canary > 0 {
		w, err := o.newWatch(ctx, t, op, run)
		if err != nil {
			return nil, err
		}
		g.watch, g.ramp.Watch = w, w
		for _, d := range dests {
			if err := w.Watch(ctx, d); err != nil {
				return nil, errors.Join(err, g.Close())
			}
		}
		// Judgeable once every destination known is watched; each
		// destination the run meets later is checked as it comes.
		w.wait = s.CanaryWait
		if err := w.judgeable(); err != nil {
			return nil, errors.Join(err, g.Close())
		}
	}
	if s.RateAuto {
		p, err := o.newPace(ctx, t)
		if err != nil {
			return nil, errors.Join(err, g.Close())
		}
		g.pace, g.ramp.Pace = p, p
		for _, d := range dests {
			if _, err := p.check(ctx, d); err != nil {
				return nil, errors.Join(err, g.Close())
			}
		}
	}
	return g, nil
}

// Notes are what the operator should know of the staging: paths the
// witness cannot see.
func (g *staged) Notes() []string {
	if g == nil || g.watch == nil {
		return nil
	}
	return g.watch.Notes()
}

// Close deletes the witness and stops the pacer.
func (g *staged) Close() error {
	if g == nil {
		return nil
	}
	var errs []error
	if g.watch != nil {
		errs = append(errs, g.watch.Close())
	}
	if g.pace != nil {
		errs = append(errs, g.pace.Close())
	}
	return errors.Join(errs...)
}

// progress adds the staging's figures to p.
func (g *staged) progress(p *Progress) {
	if g == nil {
		return
	}
	if g.ramp.Canary > 0 {
		st := g.ramp.Status()
		p.Staged = true
		p.Stage, p.StageSent, p.StageSize, p.Judging = st.Stage, st.StageSent, st.StageSize, st.Judging
		p.Applied, p.FailedAgain = st.Applied, st.FailedAgain
	}
	if g.pace != nil {
		ps := g.pace.Status()
		p.Pace, p.PaceWhy = ps.Rate, ps.Why()
	}
}

// StageText is the stage as a progress line shows it: "canary 7/10",
// "stage 2 340/1000", "judging the canary".
func (p Progress) StageText() string {
	if !p.Staged {
		return ""
	}
	name := fmt.Sprintf("stage %d", p.Stage)
	if p.Stage == 0 {
		name = "canary"
	}
	if p.Judging {
		return "judging the " + name
	}
	if p.StageSize == 0 {
		return fmt.Sprintf("%s %d", name, p.StageSent)
	}
	return fmt.Sprintf("%s %d/%d", name, p.StageSent, p.StageSize)
}
