package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/components/table"
)

func n(v int64) *int64 { return &v }

// cellsOf is the table's row for queue name, from its TYPE cell on.
func cellsOf(t *testing.T, m *Model, name string) []string {
	t.Helper()
	for _, line := range strings.Split(m.View(), "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f) && i < 3; i++ {
			if strings.TrimLeft(f[i], ">!~") == name && (f[i+1] == "classic" || f[i+1] == "quorum") {
				return f[i+1:]
			}
		}
	}
	t.Fatalf("no row for %s in\n%s", name, m.View())
	return nil
}

func TestTheDelayedColumnAppearsOnlyWhereSomeRowReportsIt(t *testing.T) {
	classic := queue("/", "emails", 12)
	// Before 4.3, and for a quorum queue off screen, nothing says how
	// many messages are delayed: the overview keeps its columns.
	quorumOld := queue("/", "votes", 5)
	quorumOld.Type = "quorum"
	l := &lister{replies: []reply{{snap: snapshot(classic, quorumOld)}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	if h := header(m); strings.Contains(h, "DELAYED") || !strings.Contains(h, "TREND") {
		t.Fatalf("no row reports delayed messages, yet the header is %q", h)
	}

	// 4.3: a delayed-retry queue whose only messages wait out their delay
	// is not empty; a classic row reads unknown, never 0.
	waiting := queue("/", "invoices", 3)
	waiting.Type, waiting.Ready, waiting.Delayed, waiting.PublishRate, waiting.AckRate = "quorum", 0, n(3), 0, 0
	l.replies = append(l.replies, reply{snap: snapshot(classic, waiting)})
	m, _ = load(t, m, m.fetch())
	if h := header(m); !strings.Contains(h, "READY DELAYED") {
		t.Fatalf("header %q, want a DELAYED column beside READY", h)
	}
	// TYPE READY DELAYED UNACK TOTAL OLDEST CONS PUB/s ACK/s DRAIN
	inv := cellsOf(t, m, "invoices")
	if got := strings.Join(inv[1:5], " "); got != "0 3 0 3" {
		t.Errorf("invoices READY DELAYED UNACK TOTAL = %q, want 0 3 0 3 in\n%s", got, m.View())
	}
	if inv[9] != "delayed" {
		t.Errorf("a queue holding only delayed messages: DRAIN %q, want delayed", inv[9])
	}
	if got := cellsOf(t, m, "emails")[2]; got != "—" {
		t.Errorf("a classic queue's DELAYED reads %q, want unknown", got)
	}
}

func TestTheSelectedRowSaysWhatWaitsAndWhatIsHeldForTheDLX(t *testing.T) {
	q := queue("/", "orders", 60)
	q.Type, q.Delayed, q.DLXHeld, q.DLXHeldBytes, q.DelayedRetry = "quorum", n(20), n(7), n(2048), "all (min: 2000ms, max: 10000ms)"
	m := newModel(&lister{replies: []reply{{snap: snapshot(q)}}})
	m.SetSize(300, 30)
	m, _ = load(t, m, m.Init())
	note := m.note()
	for _, want := range []string{"7 dead letters held for the DLX (2.0 KiB)", "20 delayed (delayed retry all (min: 2000ms, max: 10000ms))"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if m.rows[0].tone != table.Warn {
		t.Errorf("a DLX backlog that does not grow: tone %v, want worth a look", m.rows[0].tone)
	}
}

func TestAGrowingDLXBacklogPutsTheQueueInTrouble(t *testing.T) {
	held := int64(3)
	scene := &clockedScene{every: DefaultRefresh, queue: func(at time.Duration) []domain.Queue {
		q := queue("/", "src", held)
		q.Type, q.Ready, q.DLXHeld, q.Consumers, q.PublishRate, q.AckRate = "quorum", 0, n(held), 0, 0, 0
		return []domain.Queue{q}
	}}
	m := New(Options{Lister: scene, Refresh: time.Nanosecond, Window: time.Minute})
	m.SetSize(120, 30)
	m, _ = load(t, m, m.Init())
	m, _ = load(t, m, m.fetch())
	if marked(m)["src"] {
		t.Fatal("a steady DLX backlog is marked in trouble")
	}
	if got := strings.Join(cellsOf(t, m, "src")[8:10], " "); got != "DLX backlog" {
		t.Errorf("a queue holding only dead letters for its DLX: DRAIN %q", got)
	}
	held = 5
	m, _ = load(t, m, m.fetch())
	if !marked(m)["src"] || shownTrouble(t, m) != 1 || !strings.Contains(m.note(), "DLX backlog growing (+2 in the last 1m)") {
		t.Fatalf("a growing DLX backlog: marked %v, note %q", marked(m)["src"], m.note())
	}
	// Held for a window after the last rise, then worth a look only.
	for scene.at < 64*time.Second {
		m, _ = load(t, m, m.fetch())
	}
	if marked(m)["src"] || m.rows[0].tone != table.Warn {
		t.Fatalf("a window after the backlog stopped growing: marked %v, tone %v", marked(m)["src"], m.rows[0].tone)
	}
}
