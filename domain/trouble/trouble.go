// Package trouble decides which queues are in trouble because of how they
// move, over a window of snapshots rather than from the last two: a DLQ
// taking dead letters, a quorum queue whose backlog of dead letters for
// its DLX grows, a work queue without consumers, stalled or growing.
// A mark is raised on what the window shows and held with hysteresis, so
// a DLQ that takes a dead letter every few seconds stays marked between
// them instead of flickering (docs/ARCHITECTURE.md §4.10).
//
// Time comes from the snapshots' own timestamps; nothing here reads the
// clock.
package trouble

import (
	"time"

	"github.com/warrenops/warren/domain"
)

// DefaultWindow is how far back a judgement looks: a minute, thirty
// samples at the default refresh.
const DefaultWindow = time.Minute

// Kind is one judgement.
type Kind uint8

// The judgements, in the order a queue's marks are listed.
const (
	// DLQGrowing: the work queue's paired DLQ rose.
	DLQGrowing Kind = iota
	// Arriving: a DLQ's own depth rose: dead letters arriving.
	Arriving
	// DLXGrowing: an at-least-once quorum queue holds more dead letters
	// for its DLX than before (messages_dlx): the target does not take
	// them.
	DLXGrowing
	// NoConsumers: ready messages and nobody consuming.
	NoConsumers
	// Stalled: consumers attached and nothing acknowledged.
	Stalled
	// Growing: published faster than acknowledged while the depth rises.
	Growing
	kinds
)

// minGrowthSamples is how many judged samples a window needs before it
// can say a queue grows: two are one step, which a steady queue takes
// upward half the time.
const minGrowthSamples = 3

// arrivals are the kinds judged from a rise of one figure (a depth, the
// DLX backlog); the others from a queue's movement, which needs its
// rates.
const arrivals = 3

// Mark is a judgement raised on a queue.
type Mark struct {
	Kind Kind
	// Added is how much the figure rose within the window (DLQGrowing,
	// Arriving, DLXGrowing).
	Added int64
	// Drain is the movement of the latest sample that showed the
	// judgement (NoConsumers, Stalled, Growing).
	Drain domain.Drain
	// Shown of Judged samples within the window showed the judgement
	// (NoConsumers, Stalled, Growing).
	Shown, Judged int
}

// Tracker keeps, per queue, what the window needs and which marks are
// raised. Its memory is a few fields per queue plus the rises and
// movement verdicts within the window, and movement is judged only for
// rows read with statistics, so a broker of 100 000 queues costs little
// more than the queues on screen.
type Tracker struct {
	window time.Duration
	queues map[domain.QueueRef]*series
	// last holds the series of the last Observe's queues, in its order;
	// gen numbers the Observe calls.
	last []*series
	gen  uint64
	// all says a snapshot of every vhost was observed, listed the
	// vhosts observed one at a time, and lastAt when the last was
	// taken: a queue that appears in a vhost observed before was
	// declared since, and its depth arrived since (see fresh).
	all    bool
	listed map[string]bool
	lastAt int64
	// gone are the queues a snapshot no longer listed, with their last
	// depths, for a window: one listed again is not taken for new.
	gone map[domain.QueueRef]goneQueue
}

// goneQueue is what a forgotten queue last showed.
type goneQueue struct {
	at, messages, dlq int64
	hasDLQ            bool
}

// series is one queue's state across snapshots: the last depths, and
// what the window holds once there is something to judge. Most queues of
// a large broker never rise and are never read with statistics, so they
// carry no judged part.
type series struct {
	ref          domain.QueueRef
	gen          uint64 // the Observe that last listed the queue
	prevMessages int64
	prevDLQ      int64
	prevAt       int64 // when the previous sample was taken
	seen         bool  // a previous sample exists
	prevHasDLQ   bool
	prevQuiet    bool // the previous sample was quiet (see idleSince)
	// quietFrom is when the run of quiet samples the previous one ends
	// began (see idleSince).
	quietFrom int64
	// doubted are rises of the DLQ while the queue looked idle: its own
	// after all if its next sample shows it busy (see observe).
	doubted []rise
	*judged
}

// judged is what a series holds while it has something to judge.
type judged struct {
	// The DLX backlog is known only for rows read with statistics: the
	// last known figure and when it was read.
	prevDLX    int64
	prevDLXAt  int64
	prevHasDLX bool
	rises      [arrivals][]rise
	verdicts   []verdict
	raised     [kinds]bool
	drain      [kinds]domain.Drain
	marks      []Mark
}

// idle reports whether nothing is left to judge: no rise or verdict in
// the window, no mark, no DLX figure to compare the next with.
func (j *judged) idle() bool {
	for _, r := range j.rises {
		if len(r) > 0 {
			return false
		}
	}
	return len(j.verdicts) == 0 && len(j.marks) == 0 && !j.prevHasDLX
}

// rise is a depth increase between two samples, at the later one.
type rise struct {
	at int64
	n  int64
}

// verdict is one judged sample: its depth and the movement it showed, or
// kinds when it showed none.
type verdict struct {
	at       int64
	messages int64
	shows    Kind
}

// New returns a tracker judging over window (DefaultWindow when not
// positive).
func New(window time.Duration) *Tracker {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Tracker{window: window, queues: map[domain.QueueRef]*series{}, listed: map[string]bool{}, gone: map[domain.QueueRef]goneQueue{}}
}

// Window is how far back the tracker looks.
func (t *Tracker) Window() time.Duration { return t.window }

// Observe records the queues of one snapshot taken at `at` and forgets
// the queues it does not list, so memory follows the broker.
func (t *Tracker) Observe(at time.Time, qs []domain.Queue) { t.ObserveIn(at, qs, "") }

// ObserveIn is Observe for a snapshot of one vhost's queues (every
// vhost's when vhost is ""): it forgets the queues of that vhost it was
// not given, and keeps the others' history, so that a dashboard that
// shows one vhost, then all again, judges the others by what it saw of
// them before rather than from nothing.
func (t *Tracker) ObserveIn(at time.Time, qs []domain.Queue, vhost string) {
	now := at.UnixNano()
	t.gen++
	prev := t.last
	if cap(t.last) < len(qs) {
		t.last = make([]*series, len(qs))
	}
	t.last = t.last[:len(qs)]
	for i, q := range qs {
		var s *series
		// The broker lists its queues in the same order each time: the
		// queue at this place last time is most often this one, found
		// without a lookup in a map of every queue.
		if i < len(prev) && prev[i] != nil && prev[i].ref.Name == q.Name && prev[i].ref.Vhost == q.Vhost {
			s = prev[i]
		} else {
			ref := q.Ref()
			if s = t.queues[ref]; s == nil {
				s = t.fresh(ref)
				t.queues[ref] = s
			}
		}
		s.gen = t.gen
		t.last[i] = s
		s.observe(now, int64(t.window), q)
	}
	if vhost == "" {
		t.all = true
	} else {
		t.listed[vhost] = true
	}
	t.lastAt = now
	for ref, g := range t.gone {
		if g.at < now-int64(t.window) {
			delete(t.gone, ref)
		}
	}
	if len(qs) == len(t.queues) {
		return
	}
	for ref, s := range t.queues {
		if s.gen != t.gen && (vhost == "" || ref.Vhost == vhost) {
			t.gone[ref] = goneQueue{at: now, messages: s.prevMessages, dlq: s.prevDLQ, hasDLQ: s.prevHasDLQ}
			delete(t.queues, ref)
		}
	}
}

// fresh is the series of a queue a snapshot lists for the first time.
// In a vhost observed before, the queue was declared since the last
// snapshot, empty: what it holds arrived since, and a DLQ declared as
// its first dead letters come (a client that declares it lazily) is
// judged as one that was there, empty. A queue a snapshot had stopped
// listing, within the window, takes up its last depths instead.
func (t *Tracker) fresh(ref domain.QueueRef) *series {
	s := &series{ref: ref}
	if t.gen <= 1 || !(t.all || t.listed[ref.Vhost]) {
		return s // nothing is known of what it held before
	}
	s.seen, s.prevAt = true, t.lastAt
	if g, ok := t.gone[ref]; ok {
		s.prevMessages, s.prevDLQ, s.prevHasDLQ = g.messages, g.dlq, g.hasDLQ
		delete(t.gone, ref)
	}
	return s
}

// ObserveSome records queues read at `at` between two snapshots of every
// queue: the rows on screen, read one by one while the list of all is
// read less often. It forgets no queue, and a queue it is not given keeps
// its last sample, so a rise is counted once, between the readings that
// show it, whichever kind of read they came from.
func (t *Tracker) ObserveSome(at time.Time, qs []domain.Queue) {
	now := at.UnixNano()
	for _, q := range qs {
		ref := q.Ref()
		s := t.queues[ref]
		if s == nil {
			s = &series{ref: ref, gen: t.gen}
			t.queues[ref] = s
		}
		s.observe(now, int64(t.window), q)
	}
}

// Forget drops the queues refs name: deleted, as the list of their vhost
// showed while the others were not listed.
func (t *Tracker) Forget(refs []domain.QueueRef) {
	for _, r := range refs {
		if s := t.queues[r]; s != nil {
			// A series the last Observe placed is matched by its name
			// there: a forgotten one must not be.
			s.ref = domain.QueueRef{}
			delete(t.queues, r)
		}
	}
}

// Marks are the marks raised on a queue after the latest snapshot, in
// Kind order; nil when none is.
func (t *Tracker) Marks(ref domain.QueueRef) []Mark {
	if s := t.queues[ref]; s != nil && s.judged != nil {
		return s.marks
	}
	return nil
}

// MarksAt is Marks of the i-th queue of the latest snapshot, without a
// lookup by name.
func (t *Tracker) MarksAt(i int) []Mark {
	if i < 0 || i >= len(t.last) || t.last[i].judged == nil {
		return nil
	}
	return t.last[i].marks
}

func (s *series) observe(now, window int64, q domain.Queue) {
	hasDLQ := q.DLQ != nil
	dlqRose := s.seen && hasDLQ && s.prevHasDLQ && q.DLQMessages > s.prevDLQ
	idle := s.idleSince(now, q)
	if idle {
		// The rise is not its own, unless the statistics lag the DLQ's
		// depth: doubted until a sample shows the queue busy.
		if dlqRose {
			s.doubted = append(prune(s.doubted, now-doubtFor, riseAt), rise{now, q.DLQMessages - s.prevDLQ})
		}
		dlqRose = false
	}
	var owned []rise
	if len(s.doubted) > 0 && s.busy(q) {
		owned, s.doubted = prune(s.doubted, now-doubtFor, riseAt), nil
	}
	rose := dlqRose || len(owned) > 0 || s.seen && q.IsDLQ() && q.Messages > s.prevMessages
	if s.judged == nil && !rose && q.DLXHeld == nil && !movesJudged(q) {
		s.keep(now, q)
		return
	}
	if s.judged == nil {
		s.judged = &judged{}
	}
	since := now - window
	for k := range s.rises {
		s.rises[k] = prune(s.rises[k], since, func(r rise) int64 { return r.at })
	}
	s.verdicts = prune(s.verdicts, since, func(v verdict) int64 { return v.at })
	if s.seen {
		for _, r := range owned {
			if r.at > since {
				s.rises[DLQGrowing] = append(s.rises[DLQGrowing], r)
			}
		}
		if dlqRose {
			s.rises[DLQGrowing] = append(s.rises[DLQGrowing], rise{now, q.DLQMessages - s.prevDLQ})
		}
		if q.IsDLQ() && q.Messages > s.prevMessages {
			s.rises[Arriving] = append(s.rises[Arriving], rise{now, q.Messages - s.prevMessages})
		}
	}
	s.observeDLX(now, window, q.DLXHeld)
	if v, d, ok := s.movement(q); ok {
		s.verdicts = append(s.verdicts, verdict{at: now, messages: q.Messages, shows: v})
		if v < kinds {
			s.drain[v] = d
		}
	}
	s.keep(now, q)
	s.judge()
	if s.idle() {
		s.judged = nil
	}
}

// keep makes q the previous sample.
func (s *series) keep(now int64, q domain.Queue) {
	switch {
	case !quiet(q):
		s.quietFrom = 0
	case !s.stillQuiet(now, q):
		s.quietFrom = now
	}
	s.seen, s.prevMessages, s.prevDLQ, s.prevHasDLQ = true, q.Messages, q.DLQMessages, q.DLQ != nil
	s.prevAt, s.prevQuiet = now, quiet(q)
}

// stillQuiet reports a quiet sample of q that goes on the run of quiet
// samples before it: the previous one quiet, at most quietGap before,
// and as deep.
func (s *series) stillQuiet(now int64, q domain.Queue) bool {
	return s.seen && s.prevQuiet && now-s.prevAt <= quietGap && quiet(q) && q.Messages == s.prevMessages
}

// quietGap is the longest time between two samples over which a queue
// quiet in both is taken to have been idle: the broker's rates are
// averaged over its last few seconds, so over a longer gap a burst
// published and dead-lettered between the samples would not show.
const quietGap = int64(10 * time.Second)

// quietFor is how long a queue must have been quiet before its DLQ's
// rise is not held against it, and doubtFor how long a rise doubted
// waits for a busy sample to make it the queue's own: the broker emits
// each queue's statistics on a timer of its own (every 5 s by default,
// later under load), so the DLQ's depth can show a dead letter before
// the rates of the queue it left do, and a queue's first statistics
// show rates of 0 whatever happened.
const (
	quietFor = int64(15 * time.Second)
	doubtFor = int64(15 * time.Second)
)

func riseAt(r rise) int64 { return r.at }

// busy reports a sample whose statistics show the queue at work:
// something published, acknowledged or unacknowledged, or its depth moved
// since the previous sample. A sample without statistics says nothing.
func (s *series) busy(q domain.Queue) bool {
	return q.HasRates && !q.StatsPending && (!quiet(q) || s.seen && q.Messages != s.prevMessages)
}

// quiet reports a sample of a queue with nothing in flight: statistics
// showing no publishes and no acknowledgements or automatically
// acknowledged deliveries, nothing unacknowledged.
func quiet(q domain.Queue) bool {
	return q.HasRates && !q.StatsPending && q.Unacked == 0 && q.PublishRate == 0 && q.AckRate == 0
}

// idleSince reports a queue that cannot have dead-lettered anything
// since its last sample, taken at most quietGap before: quiet then and
// now, and as deep. A message dead-lettered in between left the queue
// (expired, rejected, pushed out by a publish or past its delivery
// limit): its depth fell, or something was published or delivered,
// which the rates of one of the two samples show. A rise of its DLQ
// meanwhile is not its own: another queue sharing the DLQ dead-lettered,
// or a publisher wrote to the DLQ itself; the DLQ's own row shows the
// arrivals (Arriving).
func (s *series) idleSince(now int64, q domain.Queue) bool {
	return s.stillQuiet(now, q) && s.quietFrom > 0 && now-s.quietFrom >= quietFor
}

// movesJudged reports whether a sample of q is judged on its movement:
// a work queue read with statistics (see movement).
func movesJudged(q domain.Queue) bool {
	return q.HasRates && !q.IsDLQ() && !q.Parking && q.RetryTarget == nil
}

// observeDLX records a rise of the DLX backlog. A sample without the
// figure (a row off screen, a broker before 4.3) neither rises nor
// forgets the last known one; a rise is counted only from a figure read
// within the window, since a rise over a longer gap says nothing about
// now.
func (s *series) observeDLX(now, window int64, held *int64) {
	if held == nil {
		return
	}
	if s.prevHasDLX && *held > s.prevDLX && now-s.prevDLXAt <= window {
		s.rises[DLXGrowing] = append(s.rises[DLXGrowing], rise{now, *held - s.prevDLX})
	}
	s.prevDLX, s.prevDLXAt, s.prevHasDLX = *held, now, true
}

// movement judges one sample of a work queue with ready messages: no
// consumers, stalled, growing, or none of them. A DLQ, a parking queue
// and a retry queue are meant to hold messages, and a row whose
// statistics were not read carries no consumer count or rates: neither
// is judged.
func (s *series) movement(q domain.Queue) (Kind, domain.Drain, bool) {
	if !movesJudged(q) {
		return kinds, domain.Drain{}, false
	}
	if q.Ready == 0 {
		return kinds, domain.Drain{}, true
	}
	d := q.Drain()
	switch {
	case q.Consumers == 0:
		return NoConsumers, domain.Drain{Movement: domain.NoConsumers}, true
	case d.Movement == domain.Stalled:
		return Stalled, d, true
	case d.Movement == domain.Growing && s.rose(q.Messages):
		return Growing, d, true
	}
	return kinds, d, true
}

// rose says whether the depth, over the window's judged samples and this
// one, mostly went up: the net rise is at least half of all the movement
// up and down. A queue that grows passes at once; a steady queue whose
// depth wanders around a level passes rarely, however busy it is, since
// its steps cancel out.
func (s *series) rose(now int64) bool {
	if len(s.verdicts) == 0 {
		return false
	}
	prev, moved := s.verdicts[0].messages, int64(0)
	for _, v := range s.verdicts[1:] {
		moved += abs(v.messages - prev)
		prev = v.messages
	}
	moved += abs(now - prev)
	net := now - s.verdicts[0].messages
	return net > 0 && 2*net >= moved
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// judge raises and clears the marks from what the window holds. An
// arrival is news: a rise within the window raises its mark, which holds
// until a whole window has passed without one. A movement is raised when
// it shows in at least half of the window's judged samples and cleared
// when it shows in under a quarter of them, so a queue whose rates jitter
// around the line neither flickers nor stays marked for good.
func (s *series) judge() {
	var marks []Mark
	for k := range Kind(arrivals) {
		var added int64
		for _, r := range s.rises[k] {
			added += r.n
		}
		s.raised[k] = added > 0
		if s.raised[k] {
			marks = append(marks, Mark{Kind: k, Added: added})
		}
	}
	var shown [kinds]int
	for _, v := range s.verdicts {
		if v.shows < kinds {
			shown[v.shows]++
		}
	}
	judged := len(s.verdicts)
	for k := Kind(arrivals); k < kinds; k++ {
		n := shown[k]
		switch {
		case !s.raised[k] && n > 0 && 2*n >= judged && (k != Growing || judged >= minGrowthSamples):
			s.raised[k] = true
		case s.raised[k] && 4*n < judged, judged == 0:
			s.raised[k] = false
		}
		if s.raised[k] {
			marks = append(marks, Mark{Kind: k, Drain: s.drain[k], Shown: n, Judged: judged})
		}
	}
	s.marks = marks
}

// prune drops the entries at or before since; entries are oldest first.
func prune[T any](xs []T, since int64, at func(T) int64) []T {
	i := 0
	for i < len(xs) && at(xs[i]) <= since {
		i++
	}
	if i == 0 {
		return xs
	}
	return append(xs[:0], xs[i:]...)
}
