package overview

import (
	"cmp"
	"sync/atomic"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/sparkline"
	"github.com/warrenops/warren/ui/components/table"
)

// historySize is how many depth samples the overview keeps per queue for
// its sparkline: a minute of history at the default 2 s refresh.
const historySize = 30

// SortBy orders the overview.
type SortBy int

// Orders, in the order the sort key cycles through them.
const (
	ByDepth SortBy = iota
	ByAge
	ByDLQ
	ByName
	sortCount
)

func (s SortBy) String() string {
	return [...]string{"depth", "age", "DLQ", "name"}[s]
}

// trend is the depth history the overview draws for a queue.
type trend struct {
	depth *sparkline.History[int64]
	// seen is the snapshot that last listed the queue (buildRows).
	seen uint64
	// The queue's display strings, made once: a queue's name never
	// changes, and 100 000 rows would otherwise make them anew each
	// refresh.
	vhost, name, search string
	vhostWidth          int
	// row is the queue's place in the rows of the last snapshot of
	// every queue, where a read of the rows on screen merges it.
	row int
}

// snapshotSeq numbers the snapshots buildRows has turned into rows.
var snapshotSeq atomic.Uint64

// row is one queue ready to show: display strings are sanitised once per
// snapshot, not once per frame.
type row struct {
	q domain.Queue
	// trend holds the queue's display strings (sanitised vhost and name,
	// the vhost's width, the filter's lower-cased vhost/name) and its
	// depth history.
	trend    *trend
	age      time.Duration
	hasAge   bool
	dlqDepth int64
	tone     table.Tone
	// reasons say why the row is in trouble or worth a look.
	reasons []string
	// hasInbox is set when the config gives the queue an inbox.
	hasInbox bool
	// retry names the work queue a retry queue's messages expire back
	// into; empty for other queues.
	retry string
}

// buildRows turns a snapshot into rows, updates the per-queue trends and
// hands the snapshot to the judge, whose marks decide each row's tone.
// Trends of queues that disappeared are dropped so memory stays bounded;
// the judge forgets them itself. scope is the vhost the snapshot lists
// ("" for every vhost): the queues of the others were not listed, not
// deleted, and keep their history.
//
// The rows are written into reuse when it is large enough: the previous
// snapshot's rows, built with the same trends, which nothing reads any
// more.
func buildRows(snap *domain.Snapshot, scope string, trends map[domain.QueueRef]*trend, judge *trouble.Tracker, hasInbox func(domain.QueueRef) bool, reuse []row) []row {
	alarms := nodeAlarms(snap.Nodes)
	judge.ObserveIn(snap.TakenAt, snap.Queues, scope)
	prev := len(reuse)
	rows := reuse[:0]
	if cap(rows) < len(snap.Queues) {
		// Room for a vhost's list to grow in place (spliceVhost).
		n := len(snap.Queues)
		rows, prev = make([]row, n, n+n/32+64), 0
	}
	rows = rows[:len(snap.Queues)]
	seq := snapshotSeq.Add(1)
	for i, q := range snap.Queues {
		ref := q.Ref()
		var t *trend
		// The broker lists its queues in the same order each time: the
		// row at this place last time is most often the same queue,
		// found without a lookup in a map of every queue.
		if i < prev && rows[i].q.Name == q.Name && rows[i].q.Vhost == q.Vhost {
			t = rows[i].trend
		} else {
			t = trends[ref]
		}
		if t == nil {
			t = newTrend(q)
			trends[ref] = t
		}
		t.row = i
		rows[i] = makeRow(q, t, judge.MarksAt(i), judge.Window(), alarms[q.Node], snap.TakenAt, ownInbox(q, hasInbox))
		t.depth.Push(q.Messages)
		t.seen = seq
	}
	for ref, t := range trends {
		// A snapshot of one vhost forgets none of another's history.
		if t.seen != seq && (scope == "" || ref.Vhost == scope) {
			delete(trends, ref)
		}
	}
	return rows
}

// makeRow is the row of queue q, with its trend's display strings, the
// judge's marks and the alarm of its node.
func makeRow(q domain.Queue, t *trend, marks []trouble.Mark, window time.Duration, alarm string, takenAt time.Time, hasInbox bool) row {
	r := row{q: q, trend: t, hasInbox: hasInbox}
	if q.RetryTarget != nil {
		r.retry = sanitize.Text(q.RetryTarget.Name)
	}
	if q.HeadMessageTimestamp != nil {
		r.age, r.hasAge = takenAt.Sub(*q.HeadMessageTimestamp), true
	}
	switch {
	case q.DLQ != nil:
		r.dlqDepth = q.DLQMessages
	case q.IsDLQ():
		r.dlqDepth = q.Messages
	}
	r.tone, r.reasons = assess(q, marks, window, alarm)
	return r
}

// mergeRows merges a snapshot of some queues (domain.Snapshot.OnlyRows)
// into rows, the last snapshot of every queue: each queue read takes its
// new figures and keeps its place and what only the list of every queue
// tells (its DLQ pairing, the queues it is the DLQ of, whether it is a
// parking queue); the queues that dead-letter into a DLQ read take its
// new depth. The judge observes those queues alone, and their trends
// take the new depth. It reports false when a queue read is not among
// the rows (declared since the list was read): then only a new list
// can place it.
func mergeRows(rows []row, snap *domain.Snapshot, trends map[domain.QueueRef]*trend, judge *trouble.Tracker, hasInbox func(domain.QueueRef) bool) bool {
	alarms := nodeAlarms(snap.Nodes)
	at := func(ref domain.QueueRef) int {
		if t := trends[ref]; t != nil && t.row < len(rows) && rows[t.row].q.Ref() == ref {
			return t.row
		}
		return -1
	}
	placed := true
	changed := make([]int, 0, len(snap.Queues))
	for _, q := range snap.Queues {
		i := at(q.Ref())
		if i < 0 {
			placed = false
			continue
		}
		old := rows[i].q
		q.KeepPairing(old)
		rows[i].q = q
		changed = append(changed, i)
		for _, src := range q.DLQOf {
			if j := at(src); j >= 0 && rows[j].q.DLQMessages != q.Messages {
				rows[j].q.DLQMessages = q.Messages
				changed = append(changed, j)
			}
		}
	}
	seen := make(map[int]bool, len(changed))
	observed := make([]domain.Queue, 0, len(changed))
	unique := changed[:0]
	for _, i := range changed {
		if !seen[i] {
			seen[i] = true
			unique = append(unique, i)
			observed = append(observed, rows[i].q)
		}
	}
	judge.ObserveSome(snap.TakenAt, observed)
	for _, i := range unique {
		q, t := rows[i].q, rows[i].trend
		rows[i] = makeRow(q, t, judge.Marks(q.Ref()), judge.Window(), alarms[q.Node], snap.TakenAt, hasInbox(q.Ref()))
		t.depth.Push(q.Messages)
	}
	return placed
}

// assess is format.Assess in the table's tones.
func assess(q domain.Queue, marks []trouble.Mark, window time.Duration, alarm string) (table.Tone, []string) {
	level, reasons := format.Assess(q, marks, window, alarm)
	switch level {
	case format.ActNow:
		return table.Trouble, reasons
	case format.WorthALook:
		return table.Warn, reasons
	}
	return table.Normal, nil
}

// nodeAlarms is format.NodeAlarms.
func nodeAlarms(nodes []domain.Node) map[string]string { return format.NodeAlarms(nodes) }

// compareAge puts the oldest messages first and unknown ages last.
func compareAge(x, y *row) int {
	switch {
	case x.hasAge && y.hasAge:
		return cmp.Compare(y.age, x.age)
	case x.hasAge:
		return -1
	case y.hasAge:
		return 1
	}
	return 0
}

// ownInbox reports whether the row of q shows an inbox's effects: a
// queue's own, but not a DLQ's whose source queue shows the same inbox
// — the effects are its consumer's, and on the DLQ's row they would read
// as if the DLQ were consumed.
func ownInbox(q domain.Queue, hasInbox func(domain.QueueRef) bool) bool {
	if !hasInbox(q.Ref()) {
		return false
	}
	if q.IsDLQ() {
		for _, src := range q.DLQOf {
			if hasInbox(src) {
				return false
			}
		}
	}
	return true
}
