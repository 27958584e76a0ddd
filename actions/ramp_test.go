package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

// fakeObserver judges copies by a rule: fail(n) says whether the n-th
// copy sent (from 1) dies again, apply whether it is applied; a copy's
// fate is known as soon as it is sent.
type fakeObserver struct {
	mu        sync.Mutex
	fail      func(n int) bool
	apply     func(n int) bool
	noInbox   bool
	consumers int
	lost      error
	sent      int
	failed    map[string]int
	applied   map[string]bool
}

func (f *fakeObserver) Watch(context.Context, Destination) error { return nil }

func (f *fakeObserver) sentOne(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent++
	if f.failed == nil {
		f.failed, f.applied = map[string]int{}, map[string]bool{}
	}
	switch {
	case f.fail != nil && f.fail(f.sent):
		f.failed[id]++
	case f.apply == nil || f.apply(f.sent):
		f.applied[id] = true
	}
}

func (f *fakeObserver) Failed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.failed {
		n += c
	}
	return n
}

func (f *fakeObserver) FailedOf(ids []string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, id := range ids {
		if f.failed[id] > 0 {
			n++
		}
	}
	return n
}

func (f *fakeObserver) Applied(_ context.Context, ids []string) (map[string]bool, bool) {
	if f.noInbox {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]bool{}
	for _, id := range ids {
		if f.applied[id] {
			out[id] = true
		}
	}
	return out, true
}

func (f *fakeObserver) Consumers(context.Context) int { return f.consumers }
func (f *fakeObserver) Lost() error                   { return f.lost }
func (f *fakeObserver) Failure([]string) string       { return "RuntimeException in orders (group 3f2a)" }

// clock is a ramp's clock that moves only when the ramp sleeps.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }
func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return nil
}

// push sends up to n copies through r, telling obs of each one sent;
// it returns how many went out and the error that stopped it.
func push(r *Ramp, obs *fakeObserver, n int) (int, error) {
	for i := range n {
		id := fmt.Sprintf("E-%d", i)
		if err := r.Admit(context.Background(), Copy{LogicalID: id, Dest: Destination{RoutingKey: "orders"}}); err != nil {
			return i, err
		}
		obs.sentOne(id)
	}
	return n, nil
}

func newTestRamp(obs *fakeObserver, canary int, wait time.Duration) (*Ramp, *[]domain.StageVerdict) {
	c := &clock{now: time.Unix(0, 0)}
	var recorded []domain.StageVerdict
	r := &Ramp{Canary: canary, Wait: wait, HaltAt: DefaultHaltAt, Watch: obs, Now: c.Now, Sleep: c.Sleep,
		Record: func(v domain.StageVerdict) error { recorded = append(recorded, v); return nil }}
	return r, &recorded
}

func TestRampHaltsAfterACanaryThatFails(t *testing.T) {
	obs := &fakeObserver{consumers: 1, fail: func(int) bool { return true }}
	r, recorded := newTestRamp(obs, 10, 30*time.Second)
	sent, err := push(r, obs, 20000)
	var halt *HaltError
	if !errors.As(err, &halt) || !errors.Is(err, ErrHalted) {
		t.Fatalf("err %v, want a halt", err)
	}
	// The first failure halts at once: the canary allows none.
	if sent > 10 {
		t.Errorf("%d copies sent, want at most the canary's 10", sent)
	}
	if !strings.Contains(halt.Reason, "after the canary") || !strings.Contains(halt.Reason, "RuntimeException in orders (group 3f2a)") {
		t.Errorf("reason %q: want the stage and the failure group", halt.Reason)
	}
	if len(*recorded) != 1 || (*recorded)[0].Verdict != domain.VerdictHalted {
		t.Errorf("recorded %+v, want one halted verdict", *recorded)
	}
	// A halted ramp stays halted.
	if err := r.Admit(context.Background(), Copy{LogicalID: "again"}); !errors.Is(err, ErrHalted) {
		t.Errorf("after a halt: %v, want the halt again", err)
	}
}

func TestRampStagesGrowTenfoldWhileTheyPass(t *testing.T) {
	obs := &fakeObserver{consumers: 1}
	r, recorded := newTestRamp(obs, 10, 30*time.Second)
	if sent, err := push(r, obs, 20000); err != nil || sent != 20000 {
		t.Fatalf("sent %d, err %v; want all 20000", sent, err)
	}
	if err := r.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, v := range *recorded {
		sizes = append(sizes, v.Size)
		if v.Stage < 4 && (v.Verdict != domain.VerdictPassed || v.Applied != v.Size) {
			t.Errorf("%s: %+v, want passed with every copy applied", v.Name(), v)
		}
	}
	if fmt.Sprint(sizes) != "[10 100 1000 10000 8890]" {
		t.Errorf("stage sizes %v, want 10, 100, 1000, 10000, then the rest (8890)", sizes)
	}
	if last := (*recorded)[len(*recorded)-1]; last.Verdict != domain.VerdictUnjudged {
		t.Errorf("last stage %+v, want unjudged", last)
	}
}

func TestRampHaltsMidStageOnceTheShareIsPassed(t *testing.T) {
	// The canary passes; after it, every third copy dies.
	obs := &fakeObserver{consumers: 1, fail: func(n int) bool { return n > 10 && n%3 == 0 }}
	r, _ := newTestRamp(obs, 10, 30*time.Second)
	sent, err := push(r, obs, 20000)
	var halt *HaltError
	if !errors.As(err, &halt) || halt.Verdict.Stage != 1 {
		t.Fatalf("err %v, want a halt in stage 1", err)
	}
	// It halts within stage 1, before its 100 are all out.
	if sent >= 110 {
		t.Errorf("%d sent, want the halt before stage 1 ends (110)", sent)
	}
}

func TestRampWithoutConsumersGivesNoVerdict(t *testing.T) {
	obs := &fakeObserver{consumers: 0, noInbox: true}
	r, _ := newTestRamp(obs, 5, 30*time.Second)
	sent, err := push(r, obs, 100)
	var halt *HaltError
	if !errors.As(err, &halt) || halt.Verdict.Verdict != domain.VerdictNoVerdict || sent != 5 {
		t.Fatalf("sent %d, err %v; want the canary's 5 and no verdict", sent, err)
	}
	// --canary-wait 0 asks for no verdict, and needs no consumer.
	obs = &fakeObserver{consumers: 0, noInbox: true}
	r, recorded := newTestRamp(obs, 5, 0)
	if sent, err := push(r, obs, 100); err != nil || sent != 100 {
		t.Fatalf("--canary-wait 0: sent %d, err %v; want all 100", sent, err)
	}
	if (*recorded)[0].Verdict != domain.VerdictUnjudged {
		t.Errorf("--canary-wait 0: %+v, want unjudged", (*recorded)[0])
	}
}

func TestRampWithAnInboxHaltsOnCopiesNotApplied(t *testing.T) {
	// The consumer acks but never applies: the inbox says pending.
	obs := &fakeObserver{consumers: 1, apply: func(int) bool { return false }}
	r, _ := newTestRamp(obs, 10, 5*time.Second)
	_, err := push(r, obs, 100)
	var halt *HaltError
	if !errors.As(err, &halt) || !strings.Contains(halt.Reason, "10 not applied after 5s") {
		t.Fatalf("err %v, want a halt naming the copies not applied", err)
	}
	// Without an inbox, copies that do not die pass after the wait.
	obs = &fakeObserver{consumers: 1, noInbox: true}
	r, recorded := newTestRamp(obs, 10, 5*time.Second)
	if _, err := push(r, obs, 100); err != nil {
		t.Fatal(err)
	}
	if v := (*recorded)[0]; v.Verdict != domain.VerdictPassed || !strings.Contains(v.Why, "no inbox") {
		t.Errorf("canary %+v, want passed, saying no inbox vouched for it", v)
	}
}

func TestRampLetsALaterStageGoOnWhileTheConsumersApplyIt(t *testing.T) {
	// The canary is applied at once; of stage 1 only every other copy is
	// applied within the wait (a slow but healthy consumer).
	obs := &fakeObserver{consumers: 1, apply: func(n int) bool { return n <= 10 || n%2 == 0 }}
	r, recorded := newTestRamp(obs, 10, 5*time.Second)
	if sent, err := push(r, obs, 1000); err != nil || sent != 1000 {
		t.Fatalf("sent %d, err %v; want all 1000", sent, err)
	}
	v := (*recorded)[1]
	if v.Verdict != domain.VerdictPassed || v.Applied != 50 || v.Pending != 50 || !strings.Contains(v.Why, "go on with the rest") {
		t.Errorf("stage 1 %+v, want passed with 50 applied and 50 pending", v)
	}
}

func TestRampCountsALogicalIDSharedByTwoCopiesTwice(t *testing.T) {
	obs := &fakeObserver{consumers: 1}
	r, recorded := newTestRamp(obs, 4, 5*time.Second)
	for _, id := range []string{"E-1", "E-1", "E-2", "E-3", "E-4"} {
		if err := r.Admit(context.Background(), Copy{LogicalID: id}); err != nil {
			t.Fatal(err)
		}
		obs.sentOne(id)
	}
	if v := (*recorded)[0]; v.Verdict != domain.VerdictPassed || v.Applied != 4 || v.Pending != 0 {
		t.Errorf("canary %+v, want its 4 copies applied (E-1 twice)", v)
	}
}

func TestRampRecordsNoVerdictWhenCancelledOrBlind(t *testing.T) {
	obs := &fakeObserver{consumers: 1, noInbox: true}
	r, recorded := newTestRamp(obs, 2, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	for _, id := range []string{"E-1", "E-2"} {
		if err := r.Admit(ctx, Copy{LogicalID: id}); err != nil {
			t.Fatal(err)
		}
		obs.sentOne(id)
	}
	cancel()
	if err := r.Admit(ctx, Copy{LogicalID: "E-3"}); !errors.Is(err, context.Canceled) || len(*recorded) != 0 {
		t.Fatalf("cancelled while judging: %v, recorded %+v; want the cancel and no verdict", err, *recorded)
	}

	obs = &fakeObserver{consumers: 1, noInbox: true}
	r, recorded = newTestRamp(obs, 2, 5*time.Second)
	if _, err := push(r, obs, 1); err != nil {
		t.Fatal(err)
	}
	obs.lost = errors.New("connection closed")
	_, err := push(r, obs, 1)
	var halt *HaltError
	if !errors.As(err, &halt) || halt.Verdict.Verdict != domain.VerdictNoVerdict || !strings.Contains(halt.Reason, "witness") {
		t.Fatalf("a lost witness: %v, want a halt without a verdict naming the witness", err)
	}
}
