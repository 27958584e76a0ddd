package actions

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/warrenops/warren/audit"
)

// journalGroup bounds how many records one group commit writes.
const journalGroup = 64

// commitSpacing is the least time from the end of one group commit to the
// start of the next: a walk's records sync at most about a hundred times
// a second, on a disk the broker may be syncing its messages to, and
// what comes in meanwhile joins the next group. A record handed in after
// a quiet spell is written at once.
const commitSpacing = 10 * time.Millisecond

// appendTimeout bounds one group commit: a store that hangs (a team
// store behind a network that drops packets) fails the journal instead
// of holding the walk, and its operator's Ctrl-C, for good. The walk then
// stops with its operation open, nothing acked without its record, for
// `dlq resume` once the store answers. A variable for tests.
var appendTimeout = 30 * time.Second

// journal writes a walk's records in group commits
// (docs/ARCHITECTURE.md §4.4): whatever records were handed in while the
// previous group was being synced go out together, with one sync. The
// page about to be published waits for its record; a batch of confirms
// does not: its acks are sent by the journal once its record is durable,
// so confirms keep coming in while the store syncs. The first failure
// sticks: nothing handed in after it is written, and every waiter and
// callback gets the error, so no source delivery is acked without its
// record.
type journal struct {
	store audit.Store
	ctx   context.Context
	in    chan journalEntry
	done  chan struct{}
	once  sync.Once
	// now and sleep are the clock's, but in tests.
	now   func() time.Time
	sleep func(time.Duration)
}

type journalEntry struct {
	rec audit.Record
	// after runs on the journal's goroutine, in the order the records
	// were handed in, once the record is stored (nil) or cannot be.
	after func(error)
	// barrier: no record, only after, once every record handed in
	// before it is stored or cannot be (flush).
	barrier bool
}

func newJournal(ctx context.Context, store audit.Store) *journal {
	return startJournal(ctx, store, time.Now, time.Sleep)
}

func startJournal(ctx context.Context, store audit.Store, now func() time.Time, sleep func(time.Duration)) *journal {
	j := &journal{store: store, ctx: context.WithoutCancel(ctx), in: make(chan journalEntry, journalGroup), done: make(chan struct{}),
		now: now, sleep: sleep}
	go j.loop()
	return j
}

func (j *journal) loop() {
	defer close(j.done)
	var failed error
	group := make([]journalEntry, 0, journalGroup)
	recs := make([]audit.Record, 0, journalGroup)
	var committed time.Time // the end of the last group commit
	for e := range j.in {
		group = append(group[:0], e)
		if wait := committed.Add(commitSpacing).Sub(j.now()); failed == nil && wait > 0 {
			j.sleep(wait)
		}
	gather:
		for len(group) < journalGroup {
			select {
			case e, ok := <-j.in:
				if !ok {
					break gather
				}
				group = append(group, e)
			default:
				break gather
			}
		}
		recs = recs[:0]
		for _, e := range group {
			if !e.barrier {
				recs = append(recs, e.rec)
			}
		}
		err := failed
		if err == nil && len(recs) > 0 {
			ctx, cancel := context.WithTimeout(j.ctx, appendTimeout)
			_, err = j.store.AppendAll(ctx, recs)
			if err != nil && ctx.Err() != nil {
				err = fmt.Errorf("the audit store did not answer within %s: %w", appendTimeout, err)
			}
			cancel()
			failed = err
			committed = j.now()
		}
		for i, e := range group {
			if e.after != nil {
				e.after(err)
			}
			group[i] = journalEntry{}
		}
	}
}

// submit hands rec in; after (which may be nil) runs once it is stored
// or cannot be.
func (j *journal) submit(rec audit.Record, after func(error)) {
	j.in <- journalEntry{rec: rec, after: after}
}

// write hands rec in and waits until it is stored.
func (j *journal) write(rec audit.Record) error {
	res := make(chan error, 1)
	j.submit(rec, func(err error) { res <- err })
	return <-res
}

// flush waits until every record handed in so far is stored, or cannot
// be, and its callback has run. Records may still be handed in after it:
// the settling side flushes when the publisher's channel is gone while
// the reading side may still record a page it read (recorded, then
// counted not sent).
func (j *journal) flush() {
	done := make(chan struct{})
	j.in <- journalEntry{barrier: true, after: func(error) { close(done) }}
	<-done
}

// close waits for every record handed in, and the callbacks, to finish.
// Nothing may be handed in after it: the walk closes it once both the
// reading and the settling side are done.
func (j *journal) close() {
	j.once.Do(func() { close(j.in) })
	<-j.done
}
