package overview

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/table"
)

// retryQueue waits ttl ms before its messages expire back into target.
func retryQueue(name, target string, ttl float64) domain.Queue {
	q := queue("/", name, 4)
	q.Consumers = 0
	q.Arguments = map[string]any{"x-message-ttl": ttl, "x-dead-letter-exchange": ""}
	q.HasDLX = true
	q.RetryTarget = &domain.QueueRef{Vhost: "/", Name: target}
	return q
}

func TestARetryQueueShowsWhereItsMessagesGo(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(retryQueue("orders.retry", "orders", 5000))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	m, _ = load(t, m, m.fetch())
	if got := cellOf(m, m.renderRow(0), colDLQ); got != "↻ orders" {
		t.Fatalf("DLQ cell = %q, want ↻ orders", got)
	}
	if tone := m.rows[0].tone; tone != table.Normal {
		t.Fatalf("a retry queue without consumers is %v (%v), want normal: nobody is meant to consume it", tone, m.rows[0].reasons)
	}
	if note := m.note(); !strings.Contains(note, "retry queue: expired messages go back to orders after 5s") {
		t.Fatalf("note = %q", note)
	}
	_, cmd := update(t, m, press("d"))
	if e, ok := openedQueue(t, cmd).(common.ErrorMsg); !ok || !strings.Contains(e.Err.Error(), "is a retry queue: its expired messages go back to orders") {
		t.Fatalf("d on a retry queue = %v, want an explanation", e)
	}
}

func TestTheDLQColumnWidensForLongRetryTargets(t *testing.T) {
	short := queue("/", "a", 1)
	long := retryQueue("payments.retry", "payments.settlement", 1000)
	tests := []struct {
		name  string
		rows  []domain.Queue
		width int
	}{
		{name: "depths only keep the narrow column", rows: []domain.Queue{short}, width: dlqMinWidth},
		{name: "a retry target widens it", rows: []domain.Queue{short, retryQueue("a.retry", "orders", 1000)}, width: ansi.StringWidth("↻ orders")},
		{name: "up to a bound", rows: []domain.Queue{short, long}, width: dlqMaxWidth},
		{name: "a parking queue's mark is never cut", rows: []domain.Queue{short, parking("orders.dlq.quarantine")}, width: len("(parked)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &lister{replies: []reply{{snap: snapshot(tt.rows...)}}}
			m := newModel(l)
			m, _ = load(t, m, m.Init())
			if got := m.tbl.Widths()[slices.Index(m.cols, colDLQ)]; got != tt.width {
				t.Fatalf("DLQ column is %d wide, want %d", got, tt.width)
			}
		})
	}
}

func TestAFetchMayTakeThreeTimesWhatTheLastOneTook(t *testing.T) {
	m := New(Options{Lister: &lister{}, Refresh: 2 * time.Second})
	if got := m.fetchTimeout(); got != firstFetchTimeout {
		t.Fatalf("first fetch: %v, want %v", got, firstFetchTimeout)
	}
	for _, c := range []struct{ took, want time.Duration }{
		{100 * time.Millisecond, minFetchTimeout},
		{20 * time.Second, time.Minute},
	} {
		m.lastTook = c.took
		if got := m.fetchTimeout(); got != c.want {
			t.Fatalf("after a snapshot of %v: %v, want %v", c.took, got, c.want)
		}
	}
}

// At 80 columns, with every droppable column hidden, a long retry target
// would widen the row past the screen: the DLQ and NAME columns give up
// room instead, and every line fits.
func TestALongRetryTargetFitsEightyColumns(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1), retryQueue("payments.retry", "payments.settlement", 1000))}}}
	m := newModel(l)
	m.SetSize(80, 30)
	m, _ = load(t, m, m.Init())
	for _, line := range strings.Split(m.View(), "\n") {
		if w := ansi.StringWidth(line); w > 80 {
			t.Fatalf("a line is %d columns wide at 80:\n%s", w, line)
		}
	}
	if got := cellOf(m, m.renderRow(0), colDLQ) + cellOf(m, m.renderRow(1), colDLQ); !strings.Contains(got, "↻ pay") {
		t.Fatalf("the retry target is gone from the DLQ column: %q", got)
	}
}

func parking(name string) domain.Queue {
	q := queue("/", name, 3)
	q.Parking, q.Consumers = true, 0
	return q
}
