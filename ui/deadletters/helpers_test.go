package deadletters

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

var (
	t0  = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)
	ref = domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// letter builds a dead letter n minutes old.
func letter(pos int, id, reason, origin string, attempts, minutes int) domain.DeadLetter {
	return domain.DeadLetter{
		Position: pos, DeliveryTag: uint64(pos + 1), MessageID: "m-" + id, LogicalID: id,
		LogicalIDFrom: domain.IDHeader, Reason: reason, OriginQueue: origin, OriginExchange: "orders",
		Attempts: attempts, DeadLetteredAt: t0.Add(-time.Duration(minutes) * time.Minute),
		Deaths: []domain.Death{{Queue: origin, Reason: reason, Exchange: "orders", Count: 1,
			Time: t0.Add(-time.Duration(minutes) * time.Minute)}},
		Size: 100 + pos, DeliveryCount: -1, AcquiredCount: -1, Headroom: -1,
		Properties: domain.Properties{MessageID: "m-" + id, ContentType: "application/json"},
		Body:       []byte(`{"id":"` + id + `"}`),
	}
}

func sampleLetters() []domain.DeadLetter {
	ls := []domain.DeadLetter{
		letter(0, "ev-1", "rejected", "orders", 3, 5),
		letter(1, "ev-2", "rejected", "orders", 1, 65),
		letter(2, "ev-3", "expired", "payments", 2, 3000),
		letter(3, "ev-4", "delivery_limit", "orders", 20, 1),
	}
	ls[2].ReplayCount = 2
	ls[3].Quarantined = true
	ls[1].LogicalIDFrom, ls[1].LogicalID = domain.IDHash, "9f86d081"
	return ls
}

// frameworkLetter builds a dead letter a framework's error queue holds: no
// x-death, its failure told by the convention's headers, and grouped as
// decoding groups it.
func frameworkLetter(pos int, id string, f domain.Failure, attempts, minutes int) domain.DeadLetter {
	l := letter(pos, id, f.Kind, f.OriginQueue, attempts, minutes)
	l.Deaths = nil
	f.Attempts, f.FailedAt = attempts, l.DeadLetteredAt
	l.Failure, l.Group = f, domain.GroupOf(f)
	return l
}

func massTransit(errorType, message, origin string) domain.Failure {
	return domain.Failure{Convention: domain.ConventionMassTransit, Kind: domain.KindException,
		ErrorType: errorType, ErrorMessage: message, OriginQueue: origin}
}

// groupLetters fail three ways: two orders not found (one group), a
// timeout, and one the broker expired.
func groupLetters() []domain.DeadLetter {
	const notFound = "Orders.OrderNotFoundException"
	ls := []domain.DeadLetter{
		frameworkLetter(0, "ev-1", massTransit(notFound, "Order 1001 not found", "orders"), 5, 5),
		frameworkLetter(1, "ev-2", massTransit("System.TimeoutException", "The operation timed out after 30000 ms", "payments"), 3, 12),
		frameworkLetter(2, "ev-3", massTransit(notFound, "Order 1002 not found", "orders"), 3, 65),
		letter(3, "ev-4", "expired", "orders", 1, 3000),
	}
	ls[3].Failure = domain.Failure{Convention: domain.ConventionBroker, Kind: "expired", OriginQueue: "orders",
		OriginExchange: "orders", FailedAt: ls[3].DeadLetteredAt}
	ls[3].Group = domain.GroupOf(ls[3].Failure)
	return ls
}

type fakeSession struct {
	// Holder is never called: only the operations layer asks a session
	// what it holds, and the fake actions do not.
	ops.Holder
	// deadline and why are what Deadline says.
	deadline time.Time
	why      string
	mu       sync.Mutex
	pages    []ops.Page
	held     []domain.DeadLetter
	done     chan error
	closed   bool
}

func newSession(pages ...ops.Page) *fakeSession {
	return &fakeSession{pages: pages, done: make(chan error, 1)}
}

func (s *fakeSession) Next(context.Context) (ops.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pages) == 0 {
		return ops.Page{End: true}, nil
	}
	p := s.pages[0]
	s.pages = s.pages[1:]
	s.held = append(s.held, p.Letters...)
	return p, nil
}

func (s *fakeSession) Letters() []domain.DeadLetter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]domain.DeadLetter(nil), s.held...)
}

// release drops letters from the held set, as an action does with the
// ones it acked or returned.
func (s *fakeSession) release(ls []domain.DeadLetter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gone := map[int]bool{}
	for _, l := range ls {
		gone[l.Position] = true
	}
	kept := s.held[:0]
	for _, l := range s.held {
		if !gone[l.Position] {
			kept = append(kept, l)
		}
	}
	s.held = kept
}

func (s *fakeSession) Done() <-chan error { return s.done }

func (s *fakeSession) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.done <- nil
	}
	return nil
}

func (s *fakeSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// fakeBrowser hands out its sessions in order; err (if set) is returned
// unless the caller allows the risk.
type fakeBrowser struct {
	mu        sync.Mutex
	sessions  []*fakeSession
	err       error
	allowRisk []bool
}

func (b *fakeBrowser) Open(_ context.Context, _ domain.QueueRef, allowRisk bool) (ops.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowRisk = append(b.allowRisk, allowRisk)
	if b.err != nil && !allowRisk {
		return nil, b.err
	}
	if len(b.sessions) == 0 {
		return nil, errors.New("no more sessions")
	}
	s := b.sessions[0]
	b.sessions = b.sessions[1:]
	return s, nil
}

type fakeInbox struct {
	applied map[string]time.Time
	err     error
}

func (f fakeInbox) Lookup(_ context.Context, _ domain.QueueRef, ids []string) (map[string]time.Time, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]time.Time{}
	for _, id := range ids {
		if at, ok := f.applied[id]; ok {
			out[id] = at
		}
	}
	return out, nil
}

// fakeActions plans every request to one destination and executes by
// reporting progress message by message.
type fakeActions struct {
	mu       sync.Mutex
	requests []ops.Scope
	executed []*ops.Plan
	scopes   map[*ops.Plan]ops.Scope
	skip     int
	execErr  error
	// confirm is what every plan asks the operator to type (the rule
	// lives in the operations layer).
	confirm ops.Confirm
	// whole is how many messages a whole-queue plan finds; watch is the
	// browse session whose state each plan records in closedAtPlan.
	whole        int
	watch        *fakeSession
	closedAtPlan []bool
	// halt, when set, is why every run halts itself.
	halt string
	// refuse, when set, is what CheckStaging says of a staging.
	refuse func(ops.Staging) error
	// warnings are every plan's.
	warnings []string
}

func (a *fakeActions) CheckStaging(_ context.Context, _ *ops.Plan, st ops.Staging) error {
	if a.refuse == nil {
		return nil
	}
	return a.refuse(st)
}

func (s *fakeSession) Deadline() (time.Time, string) { return s.deadline, s.why }

func (a *fakeActions) Plan(_ context.Context, req ops.Scope) (*ops.Plan, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, req)
	if a.watch != nil {
		a.closedAtPlan = append(a.closedAtPlan, a.watch.isClosed())
	}
	n := len(req.Letters)
	if req.Held == nil {
		n = a.whole
	}
	dest := "queue orders (default exchange)"
	if req.Action == ops.Quarantine {
		dest = "queue orders.dlq.quarantine"
	}
	p := &ops.Plan{
		Action: req.Action, Queue: req.Queue, Decided: true, Selected: n, Publish: n - min(a.skip, n), SkippedApplied: min(a.skip, n),
		Summary:      fmt.Sprintf("%s %d messages from %s to %s", req.Action, n-min(a.skip, n), req.Queue.Name, dest),
		Destinations: []ops.Destination{{Name: dest, Count: n - min(a.skip, n)}},
		Bytes:        int64(100 * n),
		Confirm:      a.confirm,
		CanStage:     req.Held == nil && (req.Action == ops.Replay || req.Action == ops.Resume),
		Warnings:     a.warnings,
	}
	if a.scopes == nil {
		a.scopes = map[*ops.Plan]ops.Scope{}
	}
	a.scopes[p] = req
	return p, nil
}

func (a *fakeActions) Run(_ context.Context, p *ops.Plan, progress func(ops.Progress)) (ops.Result, error) {
	a.mu.Lock()
	a.executed = append(a.executed, p)
	req := a.scopes[p]
	a.mu.Unlock()
	if s, ok := req.Held.(*fakeSession); ok {
		s.release(req.Letters)
	}
	n := p.Publish
	for i := 1; i <= n; i++ {
		progress(ops.Progress{Total: n, Done: i, Confirmed: i, At: t0.Add(time.Duration(i) * time.Second)})
	}
	if a.halt != "" {
		return ops.Result{Counts: domain.Counts{Operation: "op-1", Selected: 10, Confirmed: 10, Halted: true, HaltReason: a.halt}},
			errors.New("halted " + a.halt)
	}
	return ops.Result{Counts: domain.Counts{Operation: "op-1", Selected: n, SkippedApplied: p.SkippedApplied, Confirmed: n},
		AuditHead: &domain.AuditHead{Seq: 7, Hash: "9f86d081"}}, a.execErr
}

func (a *fakeActions) plans() ([]ops.Scope, []*ops.Plan) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ops.Scope(nil), a.requests...), append([]*ops.Plan(nil), a.executed...)
}

type filterFunc func(d domain.DeadLetter, applied *bool) (bool, error)

func (f filterFunc) Match(d domain.DeadLetter, applied *bool, _ time.Time) (bool, error) {
	return f(d, applied)
}

// compile understands four expressions, enough to prove the screen's
// handling of filters; the real language is tested where it lives.
func compile(src string) (ops.Filter, error) {
	switch {
	case strings.HasPrefix(src, "reason == "):
		want := strings.Trim(strings.TrimPrefix(src, "reason == "), `"`)
		return filterFunc(func(d domain.DeadLetter, _ *bool) (bool, error) { return d.Reason == want, nil }), nil
	case strings.HasPrefix(src, "group == "):
		want := strings.Trim(strings.TrimPrefix(src, "group == "), `"`)
		return filterFunc(func(d domain.DeadLetter, _ *bool) (bool, error) { return d.Group == want, nil }), nil
	case src == "applied == false":
		return filterFunc(func(_ domain.DeadLetter, a *bool) (bool, error) { return a != nil && !*a, nil }), nil
	case src == "header(x) > 1":
		return filterFunc(func(domain.DeadLetter, *bool) (bool, error) { return false, errors.New("invalid operation: nil > int") }), nil
	}
	return nil, fmt.Errorf("unknown name %s (1:1)", src)
}

// driver feeds the model its own commands' messages, as the program
// would, and records what the screen asks of the root.
type driver struct {
	t    *testing.T
	m    *Model
	msgs chan tea.Msg
	out  []tea.Msg
}

func newDriver(t *testing.T, deps Deps, opts Options) *driver {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0 }
	}
	opts.Styles = styles.New(true)
	if deps.CompileFilter == nil {
		deps.CompileFilter = compile
	}
	d := &driver{t: t, m: New(ref, deps, opts), msgs: make(chan tea.Msg, 256)}
	d.m.SetSize(120, 40)
	t.Cleanup(func() { d.m.Close() })
	d.run(d.m.Init())
	return d
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { d.msgs <- cmd() }()
}

func (d *driver) send(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			d.run(c)
		}
	case common.ErrorMsg, common.InfoMsg, common.OpenMessageMsg:
		d.out = append(d.out, msg)
	default:
		_, cmd := d.m.Update(msg)
		d.run(cmd)
	}
}

// until handles messages until cond holds, failing after a deadline.
func (d *driver) until(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.After(5 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-tick.C:
			// cond may depend on a command still running.
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s; view:\n%s", what, d.m.View())
		}
	}
}

// settle handles the messages in flight, until none comes for 50 ms.
func (d *driver) settle() {
	for {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-time.After(50 * time.Millisecond):
			return
		}
	}
}

func (d *driver) keys(keys ...string) {
	for _, k := range keys {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		case "space":
			msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		d.send(msg)
	}
}

func (d *driver) typeText(s string) {
	for _, r := range s {
		d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// lastOut returns the last message of type T sent to the root.
func lastOut[T any](d *driver) (T, bool) {
	for i := len(d.out) - 1; i >= 0; i-- {
		if v, ok := d.out[i].(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// errorText waits for an error report to the root and returns it.
func (d *driver) errorText() string {
	d.t.Helper()
	d.until("an error report", func() bool { _, ok := lastOut[common.ErrorMsg](d); return ok })
	e, _ := lastOut[common.ErrorMsg](d)
	d.out = nil
	return e.Err.Error()
}

// infoText waits for an information report to the root and returns it.
func (d *driver) infoText() string {
	d.t.Helper()
	d.until("an info report", func() bool { _, ok := lastOut[common.InfoMsg](d); return ok })
	e, _ := lastOut[common.InfoMsg](d)
	d.out = nil
	return e.Text
}

// browsing waits until the first page and its inbox answer are in.
func (d *driver) browsing(n int) {
	d.t.Helper()
	d.until(fmt.Sprintf("%d letters with inbox status", n), func() bool {
		if len(d.m.held.letters) != n || d.m.loading {
			return false
		}
		for _, st := range d.m.held.inbox {
			if st.state == "" {
				return false
			}
		}
		return true
	})
}
