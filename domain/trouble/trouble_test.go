package trouble

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

var (
	t0      = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)
	refresh = 2 * time.Second
	dlqRef  = domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
)

// scene gives the queues a snapshot holds at each moment.
type scene func(at time.Duration) []domain.Queue

// step is what one refresh saw of one queue.
type step struct {
	at     time.Duration
	marked bool
	marks  []Mark
}

// watch samples the scene every refresh for d, as the overview does, and
// returns what each refresh decided about ref.
func watch(tr *Tracker, s scene, d time.Duration, ref domain.QueueRef, kind Kind) []step {
	var steps []step
	for at := time.Duration(0); at <= d; at += refresh {
		tr.Observe(t0.Add(at), s(at))
		st := step{at: at, marks: tr.Marks(ref)}
		for _, m := range st.marks {
			st.marked = st.marked || m.Kind == kind
		}
		steps = append(steps, st)
	}
	return steps
}

// dlqScene is a work queue whose DLQ takes one dead letter every 5 s until
// stop, and the DLQ itself.
func dlqScene(stop time.Duration) scene {
	return func(at time.Duration) []domain.Queue {
		n := int64(min(at, stop) / (5 * time.Second))
		work := domain.Queue{Vhost: "/", Name: "orders", Messages: 10, Ready: 10, HasRates: true, Consumers: 1, PublishRate: 4, AckRate: 4, DLQ: &dlqRef, DLQMessages: 3 + n}
		dlq := domain.Queue{Vhost: "/", Name: "orders.dlq", Messages: 3 + n, Ready: 3 + n, DLQOf: []domain.QueueRef{work.Ref()}}
		return []domain.Queue{work, dlq}
	}
}

// lastRise is when the refresh sampling every 2 s last saw the DLQ rise
// in dlqScene(stop): the first sample at or after the last dead letter.
func lastRise(stop time.Duration) time.Duration {
	last := stop / (5 * time.Second) * 5 * time.Second
	return (last + refresh - 1) / refresh * refresh
}

func TestADLQGrowingEveryFewSecondsStaysMarkedAndClearsAWindowAfterItStops(t *testing.T) {
	stop := 4 * time.Minute
	for _, tt := range []struct {
		name string
		ref  domain.QueueRef
		kind Kind
	}{
		{"the work queue's DLQ growing", domain.QueueRef{Vhost: "/", Name: "orders"}, DLQGrowing},
		{"dead letters arriving in the DLQ", dlqRef, Arriving},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(time.Minute)
			clearAt := lastRise(stop) + tr.Window()
			for _, st := range watch(tr, dlqScene(stop), stop+3*time.Minute, tt.ref, tt.kind) {
				// The first dead letter comes at 5 s and is seen at 6 s.
				want := st.at >= 6*time.Second && st.at < clearAt
				if st.marked != want {
					t.Fatalf("at %v: marked = %v, want %v (marks %+v)", st.at, st.marked, want, st.marks)
				}
				if st.marked && st.at > time.Minute && st.at <= stop {
					if got := st.marks[0].Added; got < 11 || got > 12 {
						t.Fatalf("at %v: %d added over the window, want the 11 or 12 a minute brings", st.at, got)
					}
				}
			}
		})
	}
}

func TestOneDeadLetterMarksTheDLQForOneWindow(t *testing.T) {
	tr := New(time.Minute)
	s := func(at time.Duration) []domain.Queue {
		n := int64(3)
		if at >= 10*time.Second {
			n = 4
		}
		return []domain.Queue{{Vhost: "/", Name: "orders.dlq", Messages: n, DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}}}
	}
	for _, st := range watch(tr, s, 3*time.Minute, dlqRef, Arriving) {
		want := st.at >= 10*time.Second && st.at < 70*time.Second
		if st.marked != want {
			t.Fatalf("at %v: marked = %v, want %v", st.at, st.marked, want)
		}
	}
}

// workScene is a work queue that moves as bad says until stop, then
// drains with one consumer acknowledging faster than publishes come in.
func workScene(stop time.Duration, bad func(q *domain.Queue, at time.Duration)) scene {
	return func(at time.Duration) []domain.Queue {
		q := domain.Queue{Vhost: "/", Name: "email", Messages: 500, Ready: 500, HasRates: true, Consumers: 1, PublishRate: 4, AckRate: 9}
		if at < stop {
			bad(&q, at)
		}
		return []domain.Queue{q}
	}
}

func TestNotDrainingStaysMarkedAndClearsWithinAWindowOfDraining(t *testing.T) {
	stop := 4 * time.Minute
	for _, tt := range []struct {
		name string
		kind Kind
		bad  func(q *domain.Queue, at time.Duration)
	}{
		{"no consumers", NoConsumers, func(q *domain.Queue, _ time.Duration) { q.Consumers, q.AckRate = 0, 0 }},
		{"stalled", Stalled, func(q *domain.Queue, _ time.Duration) { q.AckRate = 0; q.PublishRate = 0 }},
		{"growing", Growing, func(q *domain.Queue, at time.Duration) {
			// 2.7 messages a second more in than out, seen in steps.
			q.PublishRate, q.AckRate = 6.7, 4
			q.Messages = 500 + int64(at.Seconds()*2.7)
			q.Ready = q.Messages
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(time.Minute)
			ref := domain.QueueRef{Vhost: "/", Name: "email"}
			// Growth is said from three samples: first at 4 s.
			first := time.Duration(0)
			if tt.kind == Growing {
				first = 2 * refresh
			}
			var cleared time.Duration
			for _, st := range watch(tr, workScene(stop, tt.bad), stop+3*time.Minute, ref, tt.kind) {
				switch {
				case st.at >= first && st.at < stop && !st.marked:
					t.Fatalf("at %v: not marked while %s", st.at, tt.name)
				case st.at >= stop && st.at < stop+tr.Window()/2 && !st.marked:
					t.Fatalf("at %v: cleared %v after it began to drain, want the mark held for at least half a window", st.at, st.at-stop)
				case st.at >= stop && !st.marked && cleared == 0:
					cleared = st.at
				case cleared != 0 && st.marked:
					t.Fatalf("at %v: marked again after clearing at %v", st.at, cleared)
				}
			}
			if cleared == 0 || cleared > stop+tr.Window() {
				t.Fatalf("cleared at %v, want within a window of %v", cleared, stop)
			}
		})
	}
}

func TestAQueueWhoseRatesJitterAroundEachOtherIsNotMarkedGrowing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	depth := int64(200)
	s := func(time.Duration) []domain.Queue {
		depth += int64(r.IntN(11) - 5)
		pub := 20 + r.Float64()*2 - 1
		ack := 20 + r.Float64()*2 - 1
		return []domain.Queue{{Vhost: "/", Name: "busy", Messages: depth, Ready: depth, HasRates: true, Consumers: 4, PublishRate: pub, AckRate: ack}}
	}
	tr := New(time.Minute)
	marked := 0
	for _, st := range watch(tr, s, 30*time.Minute, domain.QueueRef{Vhost: "/", Name: "busy"}, Growing) {
		if st.marked && st.at >= tr.Window() {
			marked++
		}
	}
	if marked > 0 {
		t.Fatalf("a steady queue was marked growing on %d refreshes after the first window", marked)
	}
}

func TestRowsWithoutStatisticsAreNotJudgedAndAnUnheldMarkClears(t *testing.T) {
	tr := New(time.Minute)
	ref := domain.QueueRef{Vhost: "/", Name: "idle"}
	idle := domain.Queue{Vhost: "/", Name: "idle", Messages: 5, Ready: 5, HasRates: true}
	tr.Observe(t0, []domain.Queue{idle})
	if m := tr.Marks(ref); len(m) != 1 || m[0].Kind != NoConsumers {
		t.Fatalf("marks %+v, want no consumers", m)
	}
	// Scrolled off screen: the cheap list carries no consumer count.
	unread := idle
	unread.HasRates = false
	for at := refresh; at < time.Minute; at += refresh {
		tr.Observe(t0.Add(at), []domain.Queue{unread})
		if len(tr.Marks(ref)) != 1 {
			t.Fatalf("at %v: a row without statistics lost its mark within the window", at)
		}
	}
	tr.Observe(t0.Add(time.Minute), []domain.Queue{unread})
	if m := tr.Marks(ref); m != nil {
		t.Fatalf("marks %+v after a window with nothing to hold them", m)
	}
	never := New(time.Minute)
	never.Observe(t0, []domain.Queue{unread})
	if m := never.Marks(ref); m != nil {
		t.Fatalf("a row never read with statistics is marked %+v", m)
	}
}

func TestQueuesMeantToHoldMessagesAreNotJudgedNotDraining(t *testing.T) {
	for _, q := range []domain.Queue{
		{Name: "orders.dlq", DLQOf: []domain.QueueRef{{Name: "orders"}}},
		{Name: "orders.dlq.quarantine", Parking: true},
		{Name: "orders.retry", RetryTarget: &domain.QueueRef{Name: "orders"}},
	} {
		q.Messages, q.Ready, q.HasRates = 5, 5, true
		tr := New(time.Minute)
		tr.Observe(t0, []domain.Queue{q})
		tr.Observe(t0.Add(refresh), []domain.Queue{q})
		if m := tr.Marks(q.Ref()); m != nil {
			t.Errorf("%s marked %+v", q.Name, m)
		}
	}
}

func TestDeletedQueuesAreForgotten(t *testing.T) {
	tr := New(time.Minute)
	a := domain.Queue{Vhost: "/", Name: "a", Messages: 5, Ready: 5, HasRates: true}
	b := a
	b.Name = "b"
	tr.Observe(t0, []domain.Queue{a, b})
	tr.Observe(t0.Add(refresh), []domain.Queue{a})
	if _, ok := tr.queues[b.Ref()]; ok || tr.Marks(b.Ref()) != nil {
		t.Fatal("a deleted queue is still tracked")
	}
	if len(tr.Marks(a.Ref())) != 1 {
		t.Fatal("the remaining queue lost its mark")
	}
}

// srcScene is an at-least-once quorum queue whose DLQ is full: from 10 s
// the broker holds one more dead letter for the DLX every 5 s until stop,
// then the backlog stays where it is.
func srcScene(stop time.Duration) scene {
	return func(at time.Duration) []domain.Queue {
		held := int64(2)
		if at >= 10*time.Second {
			held += int64((min(at, stop)-10*time.Second)/(5*time.Second)) + 1
		}
		return []domain.Queue{{Vhost: "/", Name: "src", Type: "quorum", Messages: held, DLXHeld: &held, HasRates: true}}
	}
}

func TestAGrowingDLXBacklogIsMarkedAndClearsAWindowAfterItStopsGrowing(t *testing.T) {
	stop := 3 * time.Minute
	tr := New(time.Minute)
	ref := domain.QueueRef{Vhost: "/", Name: "src"}
	// The last rise is at the last multiple of 5 s from 10 s up to stop,
	// seen by the refresh at or after it.
	clearAt := lastRise(stop) + tr.Window()
	for _, st := range watch(tr, srcScene(stop), stop+2*time.Minute, ref, DLXGrowing) {
		// A backlog of 2 from the start is a fact, not growth: the first
		// rise is seen at 10 s.
		want := st.at >= 10*time.Second && st.at < clearAt
		if st.marked != want {
			t.Fatalf("at %v: marked = %v, want %v (marks %+v)", st.at, st.marked, want, st.marks)
		}
		if st.marked && st.at > 80*time.Second && st.at <= stop {
			if got := st.marks[0].Added; got < 11 || got > 13 {
				t.Fatalf("at %v: %d added over the window, want the 12 a minute brings", st.at, got)
			}
		}
	}
}

func TestTheDLXBacklogIsJudgedOnlyFromSamplesThatCarryIt(t *testing.T) {
	ref := domain.QueueRef{Vhost: "/", Name: "src"}
	sample := func(held *int64) []domain.Queue {
		return []domain.Queue{{Vhost: "/", Name: "src", Type: "quorum", Messages: 9, DLXHeld: held}}
	}
	marked := func(tr *Tracker) bool {
		for _, m := range tr.Marks(ref) {
			if m.Kind == DLXGrowing {
				return true
			}
		}
		return false
	}
	three, five := int64(3), int64(5)

	// Off screen for a while (no figure), back within the window with a
	// larger backlog: it grew meanwhile.
	tr := New(time.Minute)
	tr.Observe(t0, sample(&three))
	tr.Observe(t0.Add(20*time.Second), sample(nil))
	if marked(tr) {
		t.Fatal("a sample without the figure raised the mark")
	}
	tr.Observe(t0.Add(40*time.Second), sample(&five))
	if !marked(tr) || tr.Marks(ref)[0].Added != 2 {
		t.Fatalf("a rise from a figure read within the window: marks %+v", tr.Marks(ref))
	}
	// Samples without the figure keep the mark for its window, then it
	// clears.
	tr.Observe(t0.Add(90*time.Second), sample(nil))
	if !marked(tr) {
		t.Fatal("a sample without the figure cleared the mark within its window")
	}
	tr.Observe(t0.Add(101*time.Second), sample(nil))
	if marked(tr) {
		t.Fatal("the mark outlived its window")
	}

	// Back after longer than a window: the rise says nothing about now.
	tr = New(time.Minute)
	tr.Observe(t0, sample(&three))
	tr.Observe(t0.Add(2*time.Minute), sample(&five))
	if marked(tr) {
		t.Fatal("a rise across a gap longer than the window raised the mark")
	}

	// A backlog that stays or shrinks is not growing; before 4.3 there is
	// no figure at all.
	for name, seq := range map[string][]*int64{"steady": {&five, &five, &five}, "shrinking": {&five, &three, &three}, "unknown": {nil, nil, nil}} {
		tr := New(time.Minute)
		for i, h := range seq {
			tr.Observe(t0.Add(time.Duration(i)*refresh), sample(h))
		}
		if marked(tr) {
			t.Errorf("%s backlog marked growing", name)
		}
	}
}

func TestAQueueKeepsItsSeriesWhenTheListShiftsAroundIt(t *testing.T) {
	tr := New(time.Minute)
	idle := domain.Queue{Vhost: "/", Name: "idle", Messages: 5, Ready: 5, HasRates: true}
	busy := domain.Queue{Vhost: "/", Name: "busy", Messages: 5, Ready: 5, HasRates: true, Consumers: 2, PublishRate: 1, AckRate: 1}
	other := domain.Queue{Vhost: "other", Name: "idle", Messages: 1, Ready: 1, HasRates: true, Consumers: 1, PublishRate: 1, AckRate: 1}
	tr.Observe(t0, []domain.Queue{idle, busy})
	if m := tr.MarksAt(0); len(m) != 1 || m[0].Kind != NoConsumers || tr.MarksAt(1) != nil {
		t.Fatalf("marks at 0: %+v, at 1: %+v", tr.MarksAt(0), tr.MarksAt(1))
	}
	// A queue of the same name in another vhost takes idle's place, and
	// idle moves down: each keeps its own series.
	tr.Observe(t0.Add(refresh), []domain.Queue{other, idle, busy})
	if tr.MarksAt(0) != nil || len(tr.MarksAt(1)) != 1 || tr.MarksAt(2) != nil || tr.MarksAt(3) != nil {
		t.Fatalf("marks %+v, %+v, %+v", tr.MarksAt(0), tr.MarksAt(1), tr.MarksAt(2))
	}
	if len(tr.Marks(idle.Ref())) != 1 || tr.Marks(other.Ref()) != nil || len(tr.queues) != 3 {
		t.Fatalf("by name: idle %+v, other %+v, %d tracked", tr.Marks(idle.Ref()), tr.Marks(other.Ref()), len(tr.queues))
	}
	tr.Observe(t0.Add(2*refresh), []domain.Queue{busy})
	if len(tr.queues) != 1 || tr.MarksAt(0) != nil || tr.Marks(idle.Ref()) != nil {
		t.Fatalf("after two queues went: %d tracked", len(tr.queues))
	}
}

// Between two lists of every queue, the overview reads the rows on screen
// alone: what they show is judged, and the queues not read keep their
// last sample and marks, so a rise is counted once, between the two
// readings that show it.
func TestObserveSomeJudgesTheQueuesReadAndForgetsNone(t *testing.T) {
	tr := New(time.Minute)
	s := dlqScene(time.Hour)
	tr.Observe(t0, s(0))
	// The DLQ alone is read at 5 s and 10 s: two dead letters came.
	for _, at := range []time.Duration{5 * time.Second, 10 * time.Second} {
		qs := s(at)
		tr.ObserveSome(t0.Add(at), qs[1:])
	}
	marks := tr.Marks(dlqRef)
	if len(marks) != 1 || marks[0].Kind != Arriving || marks[0].Added != 2 {
		t.Fatalf("the DLQ read alone has marks %+v, want 2 arriving", marks)
	}
	work := domain.QueueRef{Vhost: "/", Name: "orders"}
	if m := tr.Marks(work); len(m) != 0 {
		t.Fatalf("orders, not read since the list, has marks %+v", m)
	}
	// The next list shows both at 12 s: the DLQ's rise is not counted
	// again, the work queue's view of its DLQ rose by the two.
	tr.Observe(t0.Add(12*time.Second), s(12*time.Second))
	if marks := tr.Marks(dlqRef); len(marks) != 1 || marks[0].Added != 2 {
		t.Errorf("after the list the DLQ has marks %+v, want the same 2 arriving", marks)
	}
	if m := tr.Marks(work); len(m) != 1 || m[0].Kind != DLQGrowing || m[0].Added != 2 {
		t.Errorf("after the list orders has marks %+v, want its DLQ grown by 2", m)
	}
}

// A snapshot of one vhost forgets the queues of that vhost it did not
// list (deleted), and none of another vhost's: back on every vhost, a
// DLQ that was growing is judged by what was seen of it before.
func TestASnapshotOfOneVhostKeepsTheOthersSeries(t *testing.T) {
	tr := New(time.Minute)
	other := domain.QueueRef{Vhost: "billing", Name: "invoices.dlq"}
	gone := domain.QueueRef{Vhost: "/", Name: "gone"}
	for i := range 5 {
		tr.Observe(t0.Add(time.Duration(i)*refresh), []domain.Queue{
			{Vhost: "/", Name: "orders", Messages: 1},
			{Vhost: "/", Name: "gone", Messages: 1},
			{Vhost: "billing", Name: "invoices.dlq", Messages: int64(i), DLQOf: []domain.QueueRef{{Vhost: "billing", Name: "invoices"}}},
		})
	}
	tr.ObserveIn(t0.Add(5*refresh), []domain.Queue{{Vhost: "/", Name: "orders", Messages: 1}}, "/")
	if tr.queues[other] == nil {
		t.Fatal("a snapshot of / forgot billing's queue")
	}
	if tr.queues[gone] != nil {
		t.Fatal("a snapshot of / kept a queue of / it no longer lists")
	}
	tr.Observe(t0.Add(6*refresh), []domain.Queue{{Vhost: "/", Name: "orders", Messages: 1}})
	if tr.queues[other] != nil {
		t.Fatal("a snapshot of every vhost kept a queue it no longer lists")
	}
}

// Two queues share a DLQ: the one dead-lettering is marked as its DLQ
// grows, the one that is empty and idle throughout is not once it has
// been seen quiet for quietFor — its DLQ's rise is not its own; before,
// its statistics may lag the DLQ's depth, and its rises count, held a
// window. Without statistics nothing says it was idle, so it is marked.
func TestASharedDLQGrowingMarksOnlyTheQueuesThatCouldHaveDeadLettered(t *testing.T) {
	idle := domain.QueueRef{Vhost: "/", Name: "orders.invoicing"}
	for _, tt := range []struct {
		name      string
		withRates bool
		want      bool
	}{
		{"idle, with statistics", true, false},
		{"without statistics", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			shared := func(at time.Duration) []domain.Queue {
				qs := dlqScene(4 * time.Minute)(at)
				other := domain.Queue{Vhost: "/", Name: idle.Name, HasRates: tt.withRates, DLQ: &dlqRef, DLQMessages: qs[0].DLQMessages}
				qs[1].DLQOf = append(qs[1].DLQOf, idle)
				return append(qs, other)
			}
			tr := New(time.Minute)
			marked := false
			for _, st := range watch(tr, shared, 3*time.Minute, idle, DLQGrowing) {
				if st.at > time.Duration(quietFor)+time.Minute {
					marked = marked || st.marked
				}
			}
			if marked != tt.want {
				t.Errorf("the idle queue sharing the DLQ marked DLQ growing = %v, want %v", marked, tt.want)
			}
			tr = New(time.Minute)
			if steps := watch(tr, shared, 30*time.Second, domain.QueueRef{Vhost: "/", Name: "orders"}, DLQGrowing); !steps[len(steps)-1].marked {
				t.Errorf("the queue dead-lettering into the shared DLQ is not marked: %+v", steps[len(steps)-1])
			}
		})
	}
}

// Quiet in two samples far apart, or busy in the one before, a queue
// may have dead-lettered between them: its DLQ's rise stays its own. So
// does a rise after a run of quiet samples shorter than quietFor. Each
// case watches the queue quiet for quietFor first, every 2 s.
func TestAQueueIsTakenAsIdleOnlyBetweenCloseQuietSamples(t *testing.T) {
	work := domain.QueueRef{Vhost: "/", Name: "orders.invoicing"}
	sample := func(dlq int64, publish float64, depth int64) []domain.Queue {
		return []domain.Queue{{Vhost: "/", Name: work.Name, HasRates: true, PublishRate: publish, Messages: depth, Ready: depth, DLQ: &dlqRef, DLQMessages: dlq}}
	}
	for _, tt := range []struct {
		name         string
		gap          time.Duration
		publish      float64 // in the first sample
		depth, after int64
		want         bool
	}{
		{"quiet twice, 2 s apart", 2 * time.Second, 0, 0, 0, false},
		{"quiet twice, 75 s apart", 75 * time.Second, 0, 0, 0, true},
		{"published to in the sample before", 2 * time.Second, 3, 0, 0, true},
		{"full and untouched (a bounded queue nobody feeds)", 2 * time.Second, 0, 3, 3, false},
		{"its depth fell (messages expired into the DLQ)", 2 * time.Second, 0, 3, 1, true},
	} {
		tr := New(5 * time.Minute)
		at := t0
		for ; at.Before(t0.Add(time.Duration(quietFor))); at = at.Add(2 * time.Second) {
			tr.Observe(at, sample(3, 0, tt.depth))
		}
		tr.Observe(at, sample(3, tt.publish, tt.depth))
		tr.Observe(at.Add(tt.gap), sample(5, 0, tt.after))
		marks := tr.Marks(work)
		got := false
		for _, m := range marks {
			got = got || m.Kind == DLQGrowing
		}
		if got != tt.want {
			t.Errorf("%s: marked DLQ growing = %v (%+v), want %v", tt.name, got, marks, tt.want)
		}
	}
}

// The broker emits each queue's statistics on a timer of its own: the
// DLQ's depth can show a dead letter before the rates of the queue it
// left do, and a new queue's first statistics show rates of 0. A rise
// while the queue looks idle is doubted, and made its own when its next
// samples show it busy; a queue quiet for long is not marked by a rise
// it had no part in.
func TestARiseTheSourcesStatisticsShowLateIsStillItsOwn(t *testing.T) {
	work := domain.QueueRef{Vhost: "/", Name: "orders"}
	sample := func(dlq int64, publish float64) []domain.Queue {
		return []domain.Queue{{Vhost: "/", Name: work.Name, HasRates: true, PublishRate: publish, DLQ: &dlqRef, DLQMessages: dlq}}
	}
	marked := func(tr *Tracker) bool {
		for _, m := range tr.Marks(work) {
			if m.Kind == DLQGrowing {
				return true
			}
		}
		return false
	}
	tr := New(time.Minute)
	at := t0
	step := func(dlq int64, publish float64) {
		tr.Observe(at, sample(dlq, publish))
		at = at.Add(time.Second)
	}
	// Quiet for a minute: a rise then is doubted, not marked.
	for range 60 {
		step(3, 0)
	}
	step(5, 0)
	if marked(tr) {
		t.Fatal("a queue quiet for a minute is marked by its DLQ's rise before its statistics say anything")
	}
	step(5, 0)
	step(5, 0.4) // its rates catch up: the rise was its own
	if !marked(tr) {
		t.Fatal("the rise its late statistics show is not held against the queue")
	}
	// Quiet again for long, the DLQ rises, and the queue stays quiet
	// past doubtFor: not its own.
	for range 120 {
		step(5, 0)
	}
	if marked(tr) {
		t.Fatal("the mark outlived its window")
	}
	step(7, 0)
	for range 20 {
		step(7, 0)
	}
	step(7, 0.4)
	if marked(tr) {
		t.Error("a rise doubtFor before the queue's next busy sample is held against it")
	}
	// A doubted rise waits through a sample without statistics (its row
	// off screen): that says nothing of the queue.
	for range 30 {
		step(7, 0)
	}
	step(9, 0)
	tr.Observe(at, []domain.Queue{{Vhost: "/", Name: work.Name, DLQ: &dlqRef, DLQMessages: 9}})
	at = at.Add(time.Second)
	if marked(tr) {
		t.Error("a sample without statistics made a doubted rise the queue's own")
	}
	step(9, 0.4)
	if !marked(tr) {
		t.Error("the busy sample after a sample without statistics did not make the doubted rise its own")
	}
	// Watched for less than quietFor, a quiet queue's rise counts: its
	// statistics may be its first.
	tr, at = New(time.Minute), t0
	step(0, 0)
	step(0, 0)
	step(1, 0)
	if !marked(tr) {
		t.Error("a rise 2 s into watching a quiet queue is not held against it")
	}
}

// A DLQ declared while warren watches — a client that declares it as
// its first dead letters come — holds what arrived since the snapshot
// before: marked as dead letters arriving, as one that was there empty.
// A queue first listed in a vhost no snapshot covered before, or listed
// again after a snapshot missed it, is not taken for new.
func TestADLQDeclaredWhileWatchedIsMarkedArriving(t *testing.T) {
	work := domain.Queue{Vhost: "/", Name: "pay", Messages: 0, HasRates: true, Consumers: 1, PublishRate: 5, AckRate: 5}
	dlq := domain.Queue{Vhost: "/", Name: "pay.dlq", Messages: 50, Ready: 50, DLQOf: []domain.QueueRef{work.Ref()}}
	tr := New(0)
	tr.Observe(t0, []domain.Queue{work})
	tr.Observe(t0.Add(refresh), []domain.Queue{work, dlq})
	marks := tr.Marks(dlq.Ref())
	if len(marks) != 1 || marks[0].Kind != Arriving || marks[0].Added != 50 {
		t.Fatalf("a DLQ declared with 50 dead letters since the last snapshot: marks %+v, want arriving +50", marks)
	}

	other := domain.Queue{Vhost: "other", Name: "x.dlq", Messages: 9, Ready: 9, DLQOf: []domain.QueueRef{{Vhost: "other", Name: "x"}}}
	tr = New(0)
	tr.ObserveIn(t0, []domain.Queue{work}, "/")
	tr.ObserveIn(t0.Add(refresh), []domain.Queue{other}, "other")
	if m := tr.Marks(other.Ref()); len(m) != 0 {
		t.Errorf("a queue of a vhost listed for the first time: marks %+v", m)
	}

	tr = New(0)
	tr.Observe(t0, []domain.Queue{work, dlq})
	tr.Observe(t0.Add(refresh), []domain.Queue{work})
	tr.Observe(t0.Add(2*refresh), []domain.Queue{work, dlq})
	if m := tr.Marks(dlq.Ref()); len(m) != 0 {
		t.Errorf("a DLQ one snapshot missed, listed again as deep: marks %+v", m)
	}
}
