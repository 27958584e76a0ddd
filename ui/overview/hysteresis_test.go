package overview

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/components/table"
)

// clockedScene answers each snapshot with the scene as it stands one
// refresh later than the last, stamped with the scene's own time: the
// overview's judgement reads no clock of its own.
type clockedScene struct {
	every time.Duration
	at    time.Duration
	calls int
	queue func(at time.Duration) []domain.Queue
}

func (c *clockedScene) Snapshot(context.Context, domain.SnapshotOptions) (*domain.Snapshot, error) {
	if c.calls > 0 {
		c.at += c.every
	}
	c.calls++
	snap := snapshot(c.queue(c.at)...)
	snap.TakenAt = taken.Add(c.at)
	return snap, nil
}

// troubleScene is the demo's trouble until stop: orders.dlq takes a dead
// letter every 5 s, email has no consumers, shipping's consumers stall,
// and reindex grows 2.7 messages a second. From stop on, orders.dlq takes
// no more and the three work queues drain.
func troubleScene(stop time.Duration) func(at time.Duration) []domain.Queue {
	dlq := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	return func(at time.Duration) []domain.Queue {
		letters := 3 + int64(min(at, stop)/(5*time.Second))
		orders := queue("/", "orders", 0)
		orders.DLQ, orders.DLQMessages = &dlq, letters
		ordersDLQ := queue("/", "orders.dlq", letters)
		ordersDLQ.Consumers, ordersDLQ.PublishRate, ordersDLQ.AckRate = 0, 0, 0
		ordersDLQ.DLQOf = []domain.QueueRef{orders.Ref()}
		email := queue("/", "email", 300)
		email.PublishRate, email.AckRate = 4, 9
		shipping := queue("/", "shipping", 100)
		shipping.PublishRate, shipping.AckRate = 2, 3
		reindex := queue("/", "reindex", 900)
		reindex.PublishRate, reindex.AckRate = 3, 15
		if at < stop {
			email.Consumers, email.AckRate = 0, 0
			shipping.PublishRate, shipping.AckRate = 0, 0
			reindex.PublishRate, reindex.AckRate = 6.7, 4
			reindex.Messages = 900 + int64(at.Seconds()*2.7)
			reindex.Ready = reindex.Messages
		}
		return []domain.Queue{orders, ordersDLQ, email, shipping, reindex}
	}
}

var troubleCountRE = regexp.MustCompile(`(\d+) in trouble`)

// shownTrouble is the "N in trouble" count the status line shows, 0 when
// it shows none.
func shownTrouble(t *testing.T, m *Model) int {
	t.Helper()
	match := troubleCountRE.FindStringSubmatch(m.View())
	if match == nil {
		return 0
	}
	n, _ := strconv.Atoi(match[1])
	return n
}

func marked(m *Model) map[string]bool {
	out := map[string]bool{}
	for _, r := range m.rows {
		out[r.q.Name] = r.tone == table.Trouble
	}
	return out
}

func TestTroubleMarksHoldStillAcrossRefreshesAndClearAWindowAfterTheTroubleEnds(t *testing.T) {
	const window = time.Minute
	stop := 4 * time.Minute
	scene := &clockedScene{every: DefaultRefresh, queue: troubleScene(stop)}
	m := New(Options{Lister: scene, Refresh: time.Nanosecond, Window: window})
	m.SetSize(120, 30)
	m, _ = load(t, m, m.Init())

	// orders.dlq's last dead letter comes at 4m and is seen at once.
	dlqClears := stop + window
	var cleared = map[string]time.Duration{}
	for scene.at < stop+3*window {
		m, _ = load(t, m, m.fetch())
		at := scene.at
		now := marked(m)
		for _, name := range []string{"orders", "orders.dlq"} {
			// The first dead letter comes at 5 s and is seen at 6 s.
			want := at >= 6*time.Second && at < dlqClears
			if now[name] != want {
				t.Fatalf("at %v: %s marked = %v, want %v", at, name, now[name], want)
			}
		}
		for _, name := range []string{"email", "shipping", "reindex"} {
			switch {
			case at >= 4*time.Second && at < stop && !now[name]:
				t.Fatalf("at %v: %s not marked while in trouble", at, name)
			case at >= stop && at < stop+window/2 && !now[name]:
				t.Fatalf("at %v: %s cleared %v after draining again, want the mark held for half a window", at, name, at-stop)
			case at >= stop && !now[name] && cleared[name] == 0:
				cleared[name] = at
			case cleared[name] != 0 && now[name]:
				t.Fatalf("at %v: %s marked again after clearing at %v", at, name, cleared[name])
			}
		}
		count := 0
		for _, v := range now {
			if v {
				count++
			}
		}
		if got := shownTrouble(t, m); got != count {
			t.Fatalf("at %v: the status line says %d in trouble, the rows %d", at, got, count)
		}
		if at >= window && at < stop && count != 5 {
			t.Fatalf("at %v: %d in trouble, want a steady 5 while the scene is in trouble", at, count)
		}
		if at >= stop+window && count != 0 {
			t.Fatalf("at %v: %d in trouble a window after the trouble ended", at, count)
		}
	}
	for _, name := range []string{"email", "shipping", "reindex"} {
		if c := cleared[name]; c == 0 || c > stop+window {
			t.Errorf("%s cleared at %v, want within a window of %v", name, c, stop)
		}
	}
}

func TestTheNoteSaysHowMuchTheWindowShowed(t *testing.T) {
	scene := &clockedScene{every: DefaultRefresh, queue: troubleScene(time.Minute)}
	m := New(Options{Lister: scene, Refresh: time.Nanosecond, Window: time.Minute})
	m.SetSize(200, 30)
	m, _ = load(t, m, m.Init())
	for scene.at < time.Minute+10*time.Second {
		m, _ = load(t, m, m.fetch())
	}
	// At 70 s the window (10 s, 70 s] saw the dead letters of 15 s to
	// 60 s, and email without consumers in its 24 samples up to 58 s.
	if scene.at != 70*time.Second {
		t.Fatalf("scene at %v, want 70s", scene.at)
	}
	want := map[string]string{
		"orders":     "DLQ orders.dlq growing (+10 in the last 1m)",
		"orders.dlq": "dead letters arriving (+10 in the last 1m)",
		"email":      "not draining: no consumers (24 of 30 samples in the last 1m)",
	}
	for _, r := range m.rows {
		w, ok := want[r.q.Name]
		if !ok {
			continue
		}
		if len(r.reasons) == 0 || r.reasons[0] != w {
			t.Errorf("%s: reasons %q, want first %q", r.q.Name, r.reasons, w)
		}
	}
}
