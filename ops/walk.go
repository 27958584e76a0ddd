package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/text/sanitize"
)

// A whole-queue operation: a preview reads the queue and decides every
// message (the prompt's question), then the operation streams over the
// messages the queue holds when it starts.

// preview reads the DLQ t — all of it, or its first limit messages when
// limit > 0 — and says what the operation r would do. Everything read
// goes back, in order.
func (o *Ops) preview(ctx context.Context, t *Target, r actions.Request, limit int) (*actions.Preview, beside, error) {
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return nil, beside{}, err
	}
	defer conn.Close()
	feed, others, err := o.feedCounting(conn, t, limit)
	if err != nil {
		return nil, beside{}, err
	}
	p, err := actions.NewPreview(ctx, feed, r, o.lookup(t.InboxOf))
	return p, others, errors.Join(err, feed.Close())
}

// checkDestinations refuses the previewed operation where a destination
// knowably does not exist; nothing is held.
func (o *Ops) checkDestinations(t *Target, p *actions.Preview) error {
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return err
	}
	defer conn.Close()
	return actions.CheckDestinations(conn, p.Request, p.Groups)
}

// walkPreviewed runs the previewed operation over the first messages
// of the DLQ, as many as the preview read (the N its question stated):
// the queue may still be taking back what the preview returned, so its
// depth now could read lower.
func (o *Ops) walkPreviewed(ctx context.Context, t *Target, p *actions.Preview, st Staging, progress func(Progress)) (Result, error) {
	op := actions.Walk{Request: p.Request, Expect: p.Moving, Groups: p.Groups, Lookup: o.lookup(t.InboxOf)}
	res, err := o.walk(ctx, t, op, p.Read, st, progress)
	if n := res.SkippedApplied - p.SkippedApplied; n > 0 && res.Operation != "" {
		// The run asks the inbox again as it streams.
		res.Notes = append(res.Notes, fmt.Sprintf("%d applied since the plan, skipped", n))
	}
	if res.Cancelled {
		res.Notes = append(res.Notes, fmt.Sprintf("cancelled: %d moved, the other %d stay in %s", res.Moved, max(p.Read-res.Moved, 0), t.Ref.Name))
	}
	return res, err
}

// walkNow runs r over the DLQ as it is now, without a preview (no one
// is asked): N is the queue's depth when it starts, at most limit when
// limit > 0, and each destination is checked as it first comes up.
func (o *Ops) walkNow(ctx context.Context, t *Target, r actions.Request, limit int, st Staging, progress func(Progress)) (Result, error) {
	depth, err := o.depth(t, limit)
	if err != nil {
		return Result{}, err
	}
	op := actions.Walk{Request: r, Expect: depth, ExpectRead: true, Lookup: o.lookup(t.InboxOf)}
	res, err := o.walk(ctx, t, op, depth, st, progress)
	if res.Cancelled {
		// What it never read stays too: counted against what it was to
		// walk, not what it read.
		res.Notes = append(res.Notes, fmt.Sprintf("cancelled: %d moved, the other %d of the %d it was walking stay in %s",
			res.Moved, max(max(depth, res.Taken)-res.Moved, 0), max(depth, res.Taken), t.Ref.Name))
	}
	return res, err
}

// resumableRecords reads the audit log, once, as its chain is verified,
// keeping the records a resume on vhost/queue can act on: those of the
// operation id, or, when id is empty, those of each operation on
// vhost/queue not finished (an operation's records are let go of at its
// final record). So what is held is what the open operations recorded,
// not the log: a log of many large operations read whole took a resume
// to 330 MB at 220 MB of log. A log whose chain does not hold may say
// anything, so nothing moves then (docs/ARCHITECTURE.md §4.6).
func (o *Ops) resumableRecords(ctx context.Context, vhost, queue, id string) ([]audit.Record, error) {
	st, err := o.AuditStore()
	if err != nil {
		return nil, err
	}
	var records []audit.Record
	open := map[string]bool{} // operations on vhost/queue, kept while not finished
	v, err := audit.VerifyWith(ctx, st, audit.VerifyOptions{Each: func(r audit.Record) {
		switch {
		case id != "":
			if r.Operation == id {
				records = append(records, r)
			}
		case r.Outcome == domain.OutcomeIntent && r.Vhost == vhost && r.Queue == queue && o.ours(r):
			open[r.Operation] = true
			records = append(records, r)
		case r.Outcome == domain.OutcomeFinal && open[r.Operation]:
			delete(open, r.Operation)
			records = slices.DeleteFunc(records, func(k audit.Record) bool { return k.Operation == r.Operation })
		case open[r.Operation]:
			records = append(records, r)
		}
	}})
	if err != nil {
		return nil, fmt.Errorf("verify the audit log (%s) before resuming: %w", st.Describe(), err)
	}
	// A last line that a killed warren was writing, as the store's
	// journal proves, is no break: every record before it verifies, and
	// the resume's first append sets it aside.
	if !v.OK && !v.CrashTail {
		return nil, fmt.Errorf("the audit log (%s) does not verify (%s): resume refused, since it would act on what the log says; see warren audit verify", st.Describe(), v.String())
	}
	return records, nil
}

// ours reports whether r was written by an operation on this context's
// broker: an audit log may be shared by several contexts (a team's
// PostgreSQL log, one file), and vhosts and queues of the same name on
// two brokers are not the same. A record or a context without a name
// (written before contexts were recorded, a one-off target) cannot be
// told apart and counts as ours.
func (o *Ops) ours(r audit.Record) bool {
	name := ""
	if o.c.Context != nil {
		name = o.c.Context.Name
	}
	return r.Context == "" || name == "" || r.Context == name
}

// resumable reads the audit log for the operation a resume would finish
// on t: the one named id, else the latest incomplete one.
func (o *Ops) resumable(ctx context.Context, t *Target, id string) (*actions.Resumption, error) {
	records, err := o.resumableRecords(ctx, t.Ref.Vhost, t.Ref.Name, id)
	if err != nil {
		return nil, err
	}
	r, err := actions.ReadResumption(records, t.Ref.Vhost, t.Ref.Name, id)
	if err != nil {
		return nil, err
	}
	if !o.ours(audit.Record{Context: r.Op.Context}) {
		return nil, &actions.RequestError{Err: fmt.Errorf("operation %s was run on context %s, not %s: its records say what moved on that broker, so it is resumed there (warren --context %s dlq resume …)",
			r.Op.ID, sanitize.Text(r.Op.Context), sanitize.Text(o.c.Context.Name), sanitize.Text(r.Op.Context))}
	}
	if r.Op.Action == actions.ActionImport {
		// Its messages are in its file, not in a queue: walking the
		// queue its file was exported from would publish other messages
		// under its name.
		return nil, &actions.RequestError{Err: fmt.Errorf("operation %s is an import of %s: an import is finished from its file, not from a queue; run the same `warren dlq import` again (it skips what was confirmed)",
			r.Op.ID, sanitize.Text(r.File))}
	}
	// Origins named by the letters are confirmed by today's pairing, as
	// for any replay.
	r.Request.Origins = o.origins(t.Ref)
	return r, nil
}

// previewResume reads the DLQ and decides every message as resuming r
// would, touching nothing: the count and destinations the prompt states.
func (o *Ops) previewResume(ctx context.Context, t *Target, r *actions.Resumption) (*actions.Preview, error) {
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	feed, err := o.feed(conn, t, 0)
	if err != nil {
		return nil, err
	}
	p, err := actions.NewPreview(ctx, feed, r.Request, o.lookup(t.InboxOf))
	if p != nil {
		r.Read = p.Read
	}
	return p, errors.Join(err, feed.Close())
}

// resume finishes r over every message the DLQ holds now: twins of its
// recorded confirms are removed, the rest decided as the operation
// decided it, and the final record written.
func (o *Ops) resume(ctx context.Context, t *Target, r *actions.Resumption, st Staging, progress func(Progress)) (Result, error) {
	depth, err := o.depth(t, 0)
	if err != nil {
		return Result{}, err
	}
	depth = max(depth, r.Read)
	op := actions.Walk{Request: r.Request, Lookup: o.lookup(t.InboxOf), Resume: r}
	return o.walk(ctx, t, op, depth, st, progress)
}

// depth is how many messages t holds now, at most limit when limit > 0.
func (o *Ops) depth(t *Target, limit int) (int, error) {
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ready, _, err := dlq.Inspect(conn, t.Info)
	return upTo(ready, limit), err
}

// upTo is n, at most limit when limit > 0.
func upTo(n, limit int) int {
	if limit > 0 {
		return min(n, limit)
	}
	return n
}

// walk runs op over the first limit messages of t, staged and paced as
// st says.
func (o *Ops) walk(ctx context.Context, t *Target, op actions.Walk, limit int, st Staging, progress func(Progress)) (Result, error) {
	env, err := o.env()
	if err != nil {
		return Result{}, err
	}
	var g *staged
	if st.Active() || (op.Resume != nil && op.Resume.Halted != "") {
		// A run of its own, so the copies of a halted run that died
		// again are replayed, and this run's are told apart.
		op.Run = newRun()
	}
	if st.Active() {
		id := audit.NewOperationID()
		if op.Resume != nil {
			id = op.Resume.Op.ID
		}
		env.OperationID = id
		dests := make([]actions.Destination, len(op.Groups))
		for i, gr := range op.Groups {
			dests[i] = gr.Dest
		}
		if g, err = o.stage(ctx, t, st, id, op.Run, dests); err != nil {
			return Result{}, err
		}
		defer g.Close()
		op.Gate, op.Staged = g.ramp, st.detail()
	}
	src, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return Result{}, err
	}
	defer src.Close()
	// A quorum DLQ's other consumers, counted before the feed's own
	// comes: the sweep waits for the feed's to be gone (see below).
	others := 0
	if t.Info.Type == domain.TypeQuorum {
		if _, others, err = dlq.Inspect(src, t.Info); err != nil {
			return Result{}, err
		}
	}
	feed, err := dlq.OpenFeed(src, t.Info, t.Opts, limit, 0)
	if err != nil {
		return Result{}, err
	}
	// Publishing gets a connection of its own, so flow control on the
	// copies never holds up the acks of the feed's channel.
	pubConn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return Result{}, errors.Join(fmt.Errorf("connecting the publisher: %w; nothing was changed", err), feed.Close())
	}
	blocks := watchBlocked(pubConn, o.c.Now)
	defer blocks.close()
	env.Conn = pubConn
	op.Limit = feed.Limit()
	op.Close = feed.Close
	if t.Info.Type == domain.TypeQuorum {
		// A quorum queue may lose acks across a change of leader: the
		// run then sweeps the queue for twins of its confirmed copies.
		op.Sweep = func() (actions.SweepSource, error) {
			// A quorum queue counts a consumer whose channel closed
			// until it has taken back what that consumer held — the
			// copies whose acks the old leader lost among them: the
			// depth is read once the feed's consumer is gone.
			if !consumersGone(src, t, others, sweepWait) {
				return nil, fmt.Errorf("it still counted this run's consumer after %s, so copies whose acks the broker lost may come back later", sweepWait)
			}
			depth, err := settledDepth(src, t)
			if err != nil || depth == 0 {
				return emptySource{}, err
			}
			return dlq.OpenFeed(src, t.Info, t.Opts, depth, 0)
		}
	}
	report, stop := o.report(progress, g, blocks)
	unguard := blocks.guard(ctx)
	res, err := actions.RunWalk(ctx, feed, op, env, report)
	unguard()
	stop()
	// Close returns every delivery not moved, in one nack, after the
	// acks of the moved ones.
	if cerr := feed.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("returning what was not moved to %s: %w (the broker takes it back as the connection closes)", t.Ref.Name, cerr))
	}
	out := result(res)
	if op.ExpectRead {
		// No one was asked: what stayed, and why, is said now.
		out.Notes = append(out.Notes, res.StayNotes()...)
	}
	out.Notes = append(out.Notes, g.Notes()...)
	return out, err
}

// feed opens a feed on t over conn: at most limit messages, else as many
// as the queue holds now.
func (o *Ops) feed(conn *amqp.Connection, t *Target, limit int) (*dlq.Feed, error) {
	f, _, err := o.feedCounting(conn, t, limit)
	return f, err
}

// beside is what a feed cannot read of its queue when it opens: the
// consumers of other clients (the broker's count, before the feed's own
// came), and the messages other clients hold unacknowledged
// (domain.HeldElsewhere); ready is what the queue held ready then, of
// which a limit may take part.
type beside struct{ ready, consumers, held int }

// feedCounting is feed, and what it cannot read.
func (o *Ops) feedCounting(conn *amqp.Connection, t *Target, limit int) (*dlq.Feed, beside, error) {
	ready, consumers, err := dlq.Inspect(conn, t.Info)
	if err != nil {
		return nil, beside{}, err
	}
	f, err := dlq.OpenFeed(conn, t.Info, t.Opts, upTo(ready, limit), 0)
	return f, beside{ready: ready, consumers: consumers, held: domain.HeldElsewhere(t.Info, ready)}, err
}

// lookup asks the inbox of ref's messages, page by page; nil when the
// queue has none, so statuses are unknown.
func (o *Ops) lookup(ref domain.QueueRef) actions.Lookup {
	if o.c.OpenInbox == nil {
		return nil
	}
	return func(ctx context.Context, ids []string) (map[string]bool, error) {
		c, err := o.inbox(ctx, ref)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, ErrNoInbox
		}
		found, err := c.Lookup(ctx, ids)
		if err != nil {
			return nil, err
		}
		applied := make(map[string]bool, len(found))
		for id := range found {
			applied[id] = true
		}
		return applied, nil
	}
}

// report turns the actions' progress into the layer's, with a staged
// run's figures when g is set and the broker's block of the publisher's
// connection from blocks. A staged run reports every progressEvery too,
// since nothing settles while a verdict is awaited, and so does a
// blocked one, at once when the block starts and ends; stop ends that.
func (o *Ops) report(progress func(Progress), g *staged, blocks *blockWatch) (report func(actions.Progress), stop func()) {
	if progress == nil {
		return nil, func() {}
	}
	var (
		mu      sync.Mutex
		last    actions.Progress
		done    bool
		stopped bool
	)
	emit := func() {
		p := last
		out := Progress{
			Total: p.Total, OfRead: p.OfRead, Read: p.Read, Done: p.Confirmed + p.Returned + p.Nacked + p.Unknown, Published: p.Published,
			Confirmed: p.Confirmed, Returned: p.Returned, Nacked: p.Nacked, Unknown: p.Unknown,
			Finished: p.Done, At: o.c.Now(),
		}
		if blocks != nil && !p.Done {
			out.Blocked, out.BlockedSince = blocks.state()
		}
		g.progress(&out)
		progress(out)
	}
	report = func(p actions.Progress) {
		mu.Lock()
		defer mu.Unlock()
		last, done = p, p.Done
		emit()
	}
	if blocks != nil {
		// A block, and its end, is reported at once: nothing else
		// moves while it lasts.
		blocks.onChange(func() {
			mu.Lock()
			defer mu.Unlock()
			if !done && !stopped {
				emit()
			}
		})
	}
	if g == nil && blocks == nil {
		return report, func() {}
	}
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				mu.Lock()
				// A staged run's figures move while nothing settles; a
				// blocked run's time blocked does.
				if reason, _ := blocks.state(); !done && (g != nil || reason != "") {
					emit()
				}
				mu.Unlock()
			}
		}
	}()
	// stop waits for the ticker: no report may come once Run returned.
	return report, func() {
		close(quit)
		<-ended
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}

// progressEvery is how often a staged or blocked run reports while
// nothing settles.
const progressEvery = 250 * time.Millisecond

// settledDepth is the queue's depth once it stands still for half a
// second: deliveries a closed channel handed back reach a quorum queue a
// moment later, and on a cluster that lost a node, under load, some
// moments more.
func settledDepth(conn *amqp.Connection, t *Target) (int, error) {
	last, still := -1, 0
	for range 50 {
		depth, err := dlq.Depth(conn, t.Info)
		if err != nil {
			return 0, err
		}
		if depth == last {
			if still++; still == 5 {
				return depth, nil
			}
		} else {
			last, still = depth, 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last, nil
}

// sweepWait is how long the sweep waits for the run's consumer to be
// gone from a quorum DLQ: the queue takes back what it held, the copies
// whose acks a leader lost among them, only then.
const sweepWait = 30 * time.Second

// consumersGone waits, within wait, until t counts no more consumers than
// the others it had before the run's own came; false when it still did.
func consumersGone(conn *amqp.Connection, t *Target, others int, wait time.Duration) bool {
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		_, n, err := dlq.Inspect(conn, t.Info)
		if err != nil || n <= others {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// emptySource is a queue with nothing to sweep.
type emptySource struct{}

func (emptySource) Next(context.Context, int) ([]domain.DeadLetter, bool, error) {
	return nil, true, nil
}
func (emptySource) Keep(int)              {}
func (emptySource) Ack(uint64) error      { return nil }
func (emptySource) AckAll([]uint64) error { return nil }
func (emptySource) Sync() error           { return nil }
func (emptySource) Close() error          { return nil }
