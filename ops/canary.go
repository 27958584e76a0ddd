package ops

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/text/sanitize"
)

// A staged replay's eyes (docs/ARCHITECTURE.md §4.13 "Canary, ramp and
// halt"). A copy that dies again reaches this DLQ, or the DLQ its
// destination dead-letters into, through some exchange: a witness queue
// of warren's own (warren.watch.<operation>, exclusive, deleted with its
// connection) is bound to those exchanges as the DLQs are, so it sees
// every dead letter they take while the run lasts, and counts those that
// carry this run's mark. The inbox says which copies were applied. A DLQ
// fed only through the default exchange cannot be watched: no queue can
// bind to it.

// BindingReader reads the bindings of a queue; *mgmt.Client implements
// it. Without one, the witness binds as the snapshot's topology shows.
type BindingReader interface {
	QueueBindings(ctx context.Context, ref domain.QueueRef) ([]domain.Binding, error)
}

// Router resolves where an exchange routes a key; *mgmt.Client
// implements it.
type Router interface {
	RouteKey(ctx context.Context, vhost, exchange, key string) ([]domain.QueueRef, error)
}

// watch is the actions.Observer of one staged run.
type watch struct {
	o      *Ops
	t      *Target
	op     string
	run    string
	snap   *domain.Snapshot
	conn   *amqp.Connection
	ch     *amqp.Channel
	queue  string
	lookup actions.Lookup

	// bound are the bindings the witness holds; blind the paths it
	// cannot watch, as notes; dests the destination queues seen.
	bound map[string]bool
	blind []string
	dests []domain.QueueRef
	seen  map[domain.QueueRef]bool
	// wait is the canary's --canary-wait: a destination watched while it
	// is set must have a consumer among those watched (judgeable).
	wait time.Duration

	mu      sync.Mutex
	failed  map[string]int
	n       int
	why     map[string]int // failure description → copies
	closing bool
	lost    error
	done    chan struct{}
}

// newWatch declares the witness of run (of operation op) on t's vhost
// and binds it as t is bound: the copies that die back into t are seen
// from the start. The destinations' own DLQs are bound as each comes up.
func (o *Ops) newWatch(ctx context.Context, t *Target, op, run string) (*watch, error) {
	snap, err := o.c.Mgmt.Snapshot(ctx, domain.SnapshotOptions{Vhost: t.Ref.Vhost})
	if err != nil {
		return nil, fmt.Errorf("reading the vhost to watch the canary: %w", err)
	}
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return nil, err
	}
	w := &watch{o: o, t: t, op: op, run: run, snap: snap, conn: conn, lookup: o.lookup(t.InboxOf),
		bound: map[string]bool{}, seen: map[domain.QueueRef]bool{}, failed: map[string]int{}, why: map[string]int{}, done: make(chan struct{})}
	if err := w.open(); err != nil {
		_ = conn.Close()
		return nil, err
	}
	if err := w.bindLike(ctx, t.Ref); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

func (w *watch) open() error {
	ch, err := w.conn.Channel()
	if err != nil {
		return err
	}
	w.ch = ch
	q, err := ch.QueueDeclare("warren.watch."+w.op, false, true, true, false, nil)
	if err != nil {
		return fmt.Errorf("declaring the canary's witness queue: %w", err)
	}
	w.queue = q.Name
	deliveries, err := ch.Consume(q.Name, "warren-watch", true, true, false, false, nil)
	if err != nil {
		return fmt.Errorf("consuming the canary's witness queue: %w", err)
	}
	go w.read(deliveries, ch.NotifyClose(make(chan *amqp.Error, 1)))
	return nil
}

// Lost is non-nil once the witness stopped seeing dead letters before it
// was closed: its channel or connection is gone.
func (w *watch) Lost() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost
}

// read counts the dead letters that are copies of this run, until the
// witness closes; a close warren did not ask for makes it lost.
func (w *watch) read(deliveries <-chan amqp.Delivery, closed <-chan *amqp.Error) {
	defer close(w.done)
	defer func() {
		var lost error = errors.New("its channel closed")
		select {
		case e := <-closed:
			if e != nil {
				lost = e
			}
		case <-time.After(time.Second):
		}
		w.mu.Lock()
		if !w.closing {
			w.lost = lost
		}
		w.mu.Unlock()
	}()
	for d := range deliveries {
		if op, _ := d.Headers[actions.HeaderOperation].(string); op != w.op {
			continue
		}
		if run, _ := d.Headers[actions.HeaderRun].(string); run != w.run {
			continue
		}
		dl := dlq.Decode(d, w.t.Opts, false)
		why := describeFailure(dl.Failure)
		w.mu.Lock()
		w.failed[dl.LogicalID]++
		w.n++
		w.why[why]++
		w.mu.Unlock()
	}
}

// describeFailure names a failure and its group: "rejected in orders
// (group 3f2a…)".
func describeFailure(f domain.Failure) string {
	what := f.ErrorType
	if what == "" {
		what = f.Kind
	}
	if what == "" {
		what = "died again"
	}
	if o := f.Origin(); o != "" {
		what += " in " + o
	}
	return sanitize.Text(fmt.Sprintf("%s (group %s)", what, domain.GroupOf(f)))
}

// bindLike binds the witness with every binding q has from a named
// exchange; a queue reached only through the default exchange is noted
// as blind.
func (w *watch) bindLike(ctx context.Context, q domain.QueueRef) error {
	bindings, err := w.bindingsOf(ctx, q)
	if err != nil {
		return err
	}
	named := 0
	for _, b := range bindings {
		if b.Source == "" || b.ToExchange {
			continue
		}
		named++
		key := b.Source + "\x00" + b.RoutingKey + "\x00" + fmt.Sprint(b.Arguments)
		if w.bound[key] {
			continue
		}
		if err := w.ch.QueueBind(w.queue, b.RoutingKey, b.Source, false, amqp.Table(b.Arguments)); err != nil {
			return fmt.Errorf("binding the canary's witness to exchange %s: %w", sanitize.Text(b.Source), err)
		}
		w.bound[key] = true
	}
	if named == 0 {
		w.blind = append(w.blind, fmt.Sprintf("%s is bound to no named exchange: copies that die into it cannot be seen", sanitize.Text(q.Name)))
	}
	return nil
}

func (w *watch) bindingsOf(ctx context.Context, q domain.QueueRef) ([]domain.Binding, error) {
	if r, ok := w.o.c.Mgmt.(BindingReader); ok {
		return r.QueueBindings(ctx, q)
	}
	var out []domain.Binding
	for x, list := range w.snap.Topology.Bindings {
		if x.Vhost != q.Vhost {
			continue
		}
		for _, b := range list {
			if !b.ToExchange && b.Destination == q.Name {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// Watch resolves dest's queues and binds the witness like the DLQs they
// dead-letter into. It refuses when no copy that dies could be seen and
// no inbox answers: nothing could judge the canary.
func (w *watch) Watch(ctx context.Context, dest actions.Destination) error {
	queues, err := w.o.queuesOf(ctx, w.t.Ref.Vhost, w.snap, dest)
	if err != nil {
		return err
	}
	for _, q := range queues {
		if w.seen[q] {
			continue
		}
		w.seen[q] = true
		w.dests = append(w.dests, q)
		info := w.snap.Queue(q)
		if info == nil || !info.HasDLX {
			continue // its framework writes to the DLQ, which is bound
		}
		if info.DeadLetterExchange == "" {
			w.blind = append(w.blind, fmt.Sprintf("%s dead-letters through the default exchange: its copies that die again cannot be seen", sanitize.Text(q.Name)))
			continue
		}
		route, ok := w.snap.Topology.DeadLetterRoute(*info, func(r domain.QueueRef) bool { return w.snap.Queue(r) != nil })
		if !ok || route.Missing {
			continue
		}
		for _, target := range route.Targets {
			if err := w.bindLike(ctx, target); err != nil {
				return err
			}
		}
	}
	if len(w.bound) == 0 && !w.inboxKnown(ctx) {
		return &StagingRefusal{Kind: actions.ErrCannotJudge,
			Why: strings.Join(w.blind, "; ") + ", and no inbox is configured to say they were applied",
			Do:  "configure the inbox, dead-letter through a named exchange, or replay without --canary"}
	}
	return w.judgeable()
}

// inboxKnown reports whether the DLQ's messages have an inbox (its
// client opens; a lookup of no IDs asks the database nothing).
func (w *watch) inboxKnown(ctx context.Context) bool {
	if w.lookup == nil {
		return false
	}
	_, err := w.lookup(ctx, nil)
	return err == nil
}

// queuesOf are the queues a copy sent to dest reaches, as the
// management API routes it (else as snap's topology shows).
func (o *Ops) queuesOf(ctx context.Context, vhost string, snap *domain.Snapshot, dest actions.Destination) ([]domain.QueueRef, error) {
	if dest.Exchange == "" {
		return []domain.QueueRef{{Vhost: vhost, Name: dest.RoutingKey}}, nil
	}
	if r, ok := o.c.Mgmt.(Router); ok {
		return r.RouteKey(ctx, vhost, dest.Exchange, dest.RoutingKey)
	}
	out := map[domain.QueueRef]bool{}
	if snap != nil {
		snap.Topology.Reach(domain.ExchangeRef{Vhost: vhost, Name: dest.Exchange}, dest.RoutingKey, out)
	}
	refs := make([]domain.QueueRef, 0, len(out))
	for r := range out {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, nil
}

// Failed counts the copies of the run seen dead again.
func (w *watch) Failed() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// FailedOf counts how many of ids died again, each death once.
func (w *watch) FailedOf(ids []string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	left := make(map[string]int, len(w.failed))
	n := 0
	for _, id := range ids {
		if used := left[id]; used < w.failed[id] {
			left[id] = used + 1
			n++
		}
	}
	return n
}

// Applied asks the inbox; known is false where none answers.
func (w *watch) Applied(ctx context.Context, ids []string) (map[string]bool, bool) {
	if w.lookup == nil {
		return nil, false
	}
	if len(ids) == 0 {
		return map[string]bool{}, w.inboxKnown(ctx)
	}
	got, err := w.lookup(ctx, ids)
	if err != nil {
		return nil, false
	}
	return got, true
}

// Consumers counts the consumers of the destinations seen, by a passive
// declare of each on a channel of its own (a missing queue closes it).
func (w *watch) Consumers(ctx context.Context) int {
	return consumersOf(w.conn, w.dests)
}

// judgeable refuses, before anything moves, a canary waited for on
// destinations no consumer takes from: no copy would be applied or fail
// again, so the run would publish the canary only to halt without a
// verdict. The ramp still halts a run whose consumers leave later.
func (w *watch) judgeable() error {
	if w.wait <= 0 || len(w.dests) == 0 || consumersOf(w.conn, w.dests) != 0 {
		return nil
	}
	return noConsumerError(w.dests)
}

// noConsumerError is judgeable's refusal of a canary on queues no
// consumer takes from.
func noConsumerError(queues []domain.QueueRef) error {
	names := make([]string, len(queues))
	for i, q := range queues {
		names[i] = sanitize.Text(q.Name)
	}
	return &StagingRefusal{Kind: actions.ErrCannotJudge,
		Why: strings.Join(names, ", ") + " has no consumer, so no copy of the canary would be applied or fail again",
		Do:  "start its consumers, pass --canary-wait 0 (the canary is not waited for), or replay without --canary (a resume: --no-canary)"}
}

// StagingRefusal is a staging a run refuses before anything moves: Kind
// is the sentinel (actions.ErrCannotJudge, ErrNoPace), Why the reason
// any front end can show ("orders has no consumer, …"), Do what to do
// on the command line, which the error's text adds.
type StagingRefusal struct {
	Kind error
	Why  string
	Do   string
}

func (e *StagingRefusal) Error() string {
	if e.Do == "" {
		return e.Kind.Error() + ": " + e.Why
	}
	return e.Kind.Error() + ": " + e.Why + "; " + e.Do
}

func (e *StagingRefusal) Unwrap() error { return e.Kind }

// checkCanary refuses, before anyone is asked, a canary the run would
// refuse before anything moves: it opens the run's witness on the
// destinations, as the run does — nothing could see a copy die and no
// inbox answers, or no consumer takes from them — and closes it. In a
// read-only context, where the witness's queue is not declared, only
// the consumers of destination queues named by the default exchange are
// counted.
func (o *Ops) checkCanary(ctx context.Context, t *Target, groups []actions.Group, st Staging) error {
	if o.writable("a canary's witness") == nil {
		dests := make([]actions.Destination, len(groups))
		for i, g := range groups {
			dests[i] = g.Dest
		}
		g, err := o.stage(ctx, t, Staging{Canary: st.Canary, CanaryWait: st.CanaryWait, HaltAt: st.HaltAt}, "check-"+audit.NewOperationID(), "", dests)
		if err != nil {
			return err
		}
		return g.Close()
	}
	return o.checkConsumers(t, groups)
}

// checkConsumers refuses a canary waited for on destination queues no
// consumer takes from; a plan with an exchange among its destinations is
// left to the run.
func (o *Ops) checkConsumers(t *Target, groups []actions.Group) error {
	queues := make([]domain.QueueRef, 0, len(groups))
	for _, g := range groups {
		if g.Dest.Exchange != "" {
			return nil
		}
		queues = append(queues, domain.QueueRef{Vhost: t.Ref.Vhost, Name: g.Dest.RoutingKey})
	}
	if len(queues) == 0 {
		return nil
	}
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return err
	}
	defer conn.Close()
	if consumersOf(conn, queues) == 0 {
		return noConsumerError(queues)
	}
	return nil
}

func consumersOf(conn *amqp.Connection, queues []domain.QueueRef) int {
	n := 0
	for _, q := range queues {
		ch, err := conn.Channel()
		if err != nil {
			return -1
		}
		info, err := ch.QueueDeclarePassive(q.Name, false, false, false, false, nil)
		_ = ch.Close()
		if err != nil {
			continue
		}
		n += info.Consumers
	}
	return n
}

// Failure is the most frequent failure among the copies that died.
func (w *watch) Failure([]string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	best, n := "", 0
	for why, c := range w.why {
		if c > n || (c == n && why < best) {
			best, n = why, c
		}
	}
	return best
}

// Notes say which paths the witness cannot see.
func (w *watch) Notes() []string { return w.blind }

// Close deletes the witness (it is exclusive: closing its connection
// does) and waits for its reader.
func (w *watch) Close() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	err := w.conn.Close()
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
	}
	if errors.Is(err, amqp.ErrClosed) {
		err = nil
	}
	return err
}

// newRun names one run of an operation, for the copies' x-warren-run.
func newRun() string { return audit.NewOperationID() }
