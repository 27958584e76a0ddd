package queuedetail

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

var now = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)

type describer struct {
	detail *domain.QueueDetail
	err    error
	asked  []domain.QueueRef
}

func (d *describer) Queue(_ context.Context, vhost, name string) (*domain.QueueDetail, error) {
	d.asked = append(d.asked, domain.QueueRef{Vhost: vhost, Name: name})
	return d.detail, d.err
}

func detail(q domain.Queue) *domain.QueueDetail {
	return &domain.QueueDetail{Queue: q, TakenAt: now, DeliveryLimit: -1}
}

// newScreen polls every nanosecond so that a tick a test runs returns at
// once.
func newScreen(d *describer) *Model {
	m := New(Options{Queue: domain.QueueRef{Vhost: "/", Name: "orders"}, Describer: d, Styles: styles.New(true),
		Refresh: time.Nanosecond, Now: func() time.Time { return now }})
	m.SetSize(120, 200)
	return m
}

func step(t *testing.T, m *Model, msg tea.Msg) (*Model, tea.Cmd) {
	t.Helper()
	s, cmd := m.Update(msg)
	return s.(*Model), cmd
}

func loaded(t *testing.T, d *describer) (*Model, tea.Cmd) {
	t.Helper()
	m := newScreen(d)
	return step(t, m, m.Init()())
}

func press(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func TestDetailIsFetchedForTheQueueAndPolled(t *testing.T) {
	d := &describer{detail: detail(domain.Queue{Vhost: "/", Name: "orders", Type: "classic", Messages: 12})}
	m, cmd := loaded(t, d)
	if len(d.asked) != 1 || d.asked[0].Name != "orders" {
		t.Fatalf("asked %v", d.asked)
	}
	if !strings.Contains(m.View(), "depth 12") {
		t.Fatalf("view lacks the depth:\n%s", m.View())
	}
	tick, ok := cmd().(tickMsg)
	if !ok {
		t.Fatal("a result must schedule the next refresh")
	}
	if _, cmd := step(t, m, tick); cmd == nil {
		t.Fatal("the tick must fetch")
	}
}

func TestStaleResultsAreDropped(t *testing.T) {
	d := &describer{detail: detail(domain.Queue{Vhost: "/", Name: "orders", Messages: 1})}
	m, _ := loaded(t, d)
	stale := m.fetch()
	m, _ = step(t, m, press("r"))
	d.detail = detail(domain.Queue{Vhost: "/", Name: "orders", Messages: 999})
	if _, cmd := step(t, m, stale()); cmd != nil || m.detail.Queue.Messages != 1 {
		t.Fatal("a result of the previous chain was applied")
	}
	if _, cmd := step(t, m, tickMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag - 1}}); cmd != nil {
		t.Fatal("a stale tick fetched")
	}
}

func TestOpenDLQ(t *testing.T) {
	paired := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	tests := []struct {
		name string
		q    domain.Queue
		want any
	}{
		{name: "queue opens its paired DLQ", q: domain.Queue{Vhost: "/", Name: "orders", DLQ: &paired}, want: common.OpenDLQMsg{Queue: paired}},
		{name: "DLQ opens itself", q: domain.Queue{Vhost: "/", Name: "orders.dlq", DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}}, want: common.OpenDLQMsg{Queue: paired}},
		{name: "queue without DLQ explains", q: domain.Queue{Vhost: "/", Name: "orders"}, want: "no dead-letter queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := loaded(t, &describer{detail: detail(tt.q)})
			_, cmd := step(t, m, press("d"))
			switch msg := cmd().(type) {
			case common.OpenDLQMsg:
				if msg != tt.want {
					t.Fatalf("opened %v, want %v", msg, tt.want)
				}
			case common.ErrorMsg:
				if w, ok := tt.want.(string); !ok || !strings.Contains(msg.Err.Error(), w) {
					t.Fatalf("error %v, want %v", msg.Err, tt.want)
				}
			default:
				t.Fatalf("d produced %T", msg)
			}
		})
	}
}

func TestFailuresKeepTheLastFiguresAndDeletedQueueStopsPolling(t *testing.T) {
	d := &describer{detail: detail(domain.Queue{Vhost: "/", Name: "orders", Messages: 7})}
	m, _ := loaded(t, d)
	d.detail, d.err = nil, &domain.Error{Kind: domain.ErrUnreachable, Msg: "connection refused"}
	m, cmd := step(t, m, m.fetch()())
	if cmd == nil || m.detail == nil || !strings.Contains(m.View(), "refresh failed, retrying") || !strings.Contains(m.View(), "depth 7") {
		t.Fatalf("a failed refresh must keep the figures and retry:\n%s", m.View())
	}
	d.err = &domain.Error{Kind: domain.ErrNotFound, Msg: "not found"}
	m, cmd = step(t, m, m.fetch()())
	if cmd != nil || !strings.Contains(m.View(), "no longer exists") {
		t.Fatalf("a deleted queue must stop polling and say so:\n%s", m.View())
	}
}

func TestSettingsShowWhereEachValueComesFrom(t *testing.T) {
	q := domain.Queue{Vhost: "/", Name: "orders", Type: "quorum", Policy: "limits", HasDLX: true,
		Arguments:           map[string]any{"x-dead-letter-exchange": "dlx", "x-max-length": float64(1000), "x-overflow": "reject-publish"},
		EffectiveDefinition: map[string]any{"max-length": float64(500), "message-ttl": float64(60000), "overflow": "drop-head"},
	}
	m, _ := loaded(t, &describer{detail: detail(q)})
	view := m.View()
	for _, want := range []string{
		"policy limits",
		"dead-letter-exchange     dlx",
		"argument 1000, policy 500: the smaller applies",
		"message-ttl              60000 ms (1m)",
		"argument (policy says drop-head)",
		"poison messages can loop forever",
		"none found: the dead-letter exchange routes to no queue",
	} {
		if !strings.Contains(view, want) {
			t.Fatalf("settings lack %q:\n%s", want, view)
		}
	}
}

func TestUnackedAgainstPrefetch(t *testing.T) {
	tests := []struct {
		name string
		d    domain.QueueDetail
		want string
	}{
		{name: "within", d: domain.QueueDetail{UnackedUsed: 12, UnackedAllowed: 60}, want: "unacked 12 / 60 allowed"},
		{name: "at the limit", d: domain.QueueDetail{UnackedUsed: 60, UnackedAllowed: 60}, want: "at their prefetch limit"},
		{name: "unlimited", d: domain.QueueDetail{UnackedUsed: 5, UnackedUnlimited: true}, want: "no limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newScreen(&describer{})
			if got := m.unacked(&tt.d); !strings.Contains(got, tt.want) {
				t.Fatalf("%q lacks %q", got, tt.want)
			}
		})
	}
}

func TestFindingsAndBrokerTextAreSanitised(t *testing.T) {
	d := detail(domain.Queue{Vhost: "/", Name: "orders\x1b[2J"})
	d.Findings = []domain.Finding{{Check: "dlx-routes-nowhere", Severity: domain.SeverityError, Message: "DLX \x1b]0;x\x07 has no binding"}}
	d.Consumers = []domain.Consumer{{Tag: "tag\x1b[1m", Channel: "ch", AckRequired: true, PrefetchCount: 1}}
	m, _ := loaded(t, &describer{detail: d})
	view := m.View()
	if strings.ContainsRune(view, 0x1b) || strings.ContainsRune(view, 0x07) {
		t.Fatalf("control characters reached the view: %q", view)
	}
	if !strings.Contains(view, "! error   dlx-routes-nowhere") {
		t.Fatalf("error finding not marked:\n%s", view)
	}
}

func TestARetryQueueSaysWhereItsMessagesGo(t *testing.T) {
	back := domain.QueueRef{Vhost: "/", Name: "orders"}
	q := domain.Queue{Vhost: "/", Name: "orders.retry", Type: "classic", HasDLX: true, RetryTarget: &back,
		Arguments: map[string]any{"x-message-ttl": float64(5000), "x-dead-letter-exchange": ""}}
	m, _ := loaded(t, &describer{detail: detail(q)})
	view := m.View()
	for _, want := range []string{
		"retry queue: expired messages go back to orders after 5s",
		"paired DLQ               none: dead letters go back to orders (retry loop)",
	} {
		if !strings.Contains(view, want) {
			t.Fatalf("view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "routes to no queue") {
		t.Fatalf("a retry loop is reported as a DLX routing nowhere:\n%s", view)
	}
	_, cmd := step(t, m, press("d"))
	if e, ok := cmd().(common.ErrorMsg); !ok || !strings.Contains(e.Err.Error(), "is a retry queue") {
		t.Fatalf("d on a retry queue = %v, want an explanation", e)
	}
}

// The header says how the backlog moves, in the words of the overview's
// DRAIN column and of `warren status`.
func TestHeaderSaysHowTheBacklogMoves(t *testing.T) {
	dlx := domain.QueueRef{Vhost: "/", Name: "orders"}
	tests := []struct {
		name string
		q    domain.Queue
		want string
	}{
		{"draining", domain.Queue{Messages: 12000, PublishRate: 80, AckRate: 100, Consumers: 3, HasRates: true}, "drains in 10m"},
		{"growing", domain.Queue{Messages: 10, PublishRate: 150, AckRate: 100, Consumers: 1, HasRates: true}, "not draining: growing +50/s"},
		{"steady", domain.Queue{Messages: 160, PublishRate: 2.4, AckRate: 2.4, Consumers: 3, HasRates: true}, "not draining: in = out, the backlog stays"},
		{"stalled", domain.Queue{Messages: 10, Consumers: 2, HasRates: true}, "not draining: consumers are not acknowledging"},
		{"no consumers", domain.Queue{Messages: 10, HasRates: true}, "not draining: no consumers"},
		{"a DLQ holds", domain.Queue{Messages: 10, HasRates: true, DLQOf: []domain.QueueRef{dlx}}, "held: no consumers"},
		{"no rates", domain.Queue{Messages: 10, Consumers: 1}, "rates not reported"},
		{"empty", domain.Queue{HasRates: true}, "ack 0/s · empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.Vhost, tt.q.Name, tt.q.Type = "/", "orders.x", "classic"
			m, _ := loaded(t, &describer{detail: detail(tt.q)})
			if view := m.View(); !strings.Contains(view, tt.want) {
				t.Fatalf("view lacks %q:\n%s", tt.want, view)
			}
		})
	}
}

func TestAMovementMarkIsHeldAfterTheQueueDrainsAgainThenClears(t *testing.T) {
	stalled := domain.Queue{Vhost: "/", Name: "orders", Type: "classic", Messages: 10, Ready: 10, Consumers: 2, HasRates: true}
	draining := stalled
	draining.AckRate = 5
	d := &describer{}
	m := newScreen(d)
	held := "not draining: consumers are not acknowledging"
	refresh := func(q domain.Queue, at time.Duration) string {
		t.Helper()
		d.detail = detail(q)
		d.detail.TakenAt = now.Add(at)
		m, _ = step(t, m, m.fetch()())
		return m.View()
	}
	var at time.Duration
	for ; at < time.Minute; at += 2 * time.Second {
		if view := refresh(stalled, at); !strings.Contains(view, held) {
			t.Fatalf("at %v: stalled queue's view lacks %q:\n%s", at, held, view)
		}
	}
	for ; at < time.Minute+20*time.Second; at += 2 * time.Second {
		view := refresh(draining, at)
		if !strings.Contains(view, "drains in 2s · "+held+" (") {
			t.Fatalf("at %v: draining again, the view does not hold the stall beside the movement:\n%s", at, view)
		}
	}
	for ; at < 3*time.Minute; at += 2 * time.Second {
		refresh(draining, at)
	}
	if view := m.View(); strings.Contains(view, held) {
		t.Fatalf("two minutes after draining again the stall is still said:\n%s", view)
	}
}

// An idle time is never cut, however long the channel has been idle.
func TestIdleTimesFitTheirColumn(t *testing.T) {
	for _, idle := range []time.Duration{29 * time.Second, 21*time.Hour + 4*time.Minute, 335 * 24 * time.Hour} {
		since := now.Add(-idle)
		d := detail(domain.Queue{Vhost: "/", Name: "orders", Type: "classic"})
		d.Consumers = []domain.Consumer{{Tag: "c1", Channel: "ch (1)", AckRequired: true, PrefetchCount: 10, Active: true}}
		d.Channels = []domain.Channel{{Name: "ch (1)", User: "orders", PrefetchCount: 10, IdleSince: &since}}
		m, _ := loaded(t, &describer{detail: d})
		want := "idle " + format.Duration(idle)
		var row string
		for _, line := range strings.Split(m.View(), "\n") {
			if strings.Contains(line, "ch (1)") && strings.Contains(line, "orders") {
				row = line
			}
		}
		if !strings.Contains(row, want) || strings.Contains(row, "…") {
			t.Errorf("the channel row does not show %q whole: %q", want, row)
		}
	}
}

// A line wider than the screen is wrapped, not cut: a DLQ serving many
// queues still says, at its end, how it was paired with them.
func TestALongLineIsWrappedNotCut(t *testing.T) {
	var of []domain.QueueRef
	for _, n := range []string{"orders", "orders.invoicing", "orders.pending-payment", "orders.status", "orders.shipping-labels"} {
		of = append(of, domain.QueueRef{Vhost: "/", Name: n})
	}
	q := domain.Queue{Vhost: "/", Name: "orders.dlq", Type: "classic", Durable: true, Node: "rabbit@node-1", DLQOf: of, PairedBy: "MassTransit"}
	m, _ := loaded(t, &describer{detail: detail(q)})
	for _, width := range []int{160, 100, 80} {
		m.SetSize(width, 200)
		view := m.View()
		for _, line := range strings.Split(view, "\n") {
			if w := lipgloss.Width(line); w > width {
				t.Fatalf("at %d columns a line is %d wide: %q", width, w, line)
			}
		}
		flat := strings.Join(strings.Fields(view), " ")
		if !strings.Contains(flat, "classic · durable · on node rabbit@node-1 ·") {
			t.Fatalf("a classic queue's node is not named as where it lives:\n%s", view)
		}
		if !strings.Contains(flat, "orders.shipping-labels (paired by MassTransit)") {
			t.Fatalf("at %d columns the DLQ's origins or its pairing were cut:\n%s", width, view)
		}
	}
}

// The consumers' table is padded to the screen's width: at 80 columns its
// rows stay one line each, with no blank line between them.
func TestConsumerRowsAtEightyColumnsAreOneLineEach(t *testing.T) {
	q := domain.Queue{Vhost: "/", Name: "orders", Type: "classic", Durable: true, Node: "rabbit@node-1", Consumers: 3}
	d := detail(q)
	for _, tag := range []string{"amq.ctag-worker-a", "amq.ctag-worker-b", "amq.ctag-worker-c"} {
		d.Consumers = append(d.Consumers, domain.Consumer{Tag: tag, Channel: "10.0.0.7:50312 -> 10.0.1.2:5672 (1)", AckRequired: true, PrefetchCount: 20, Active: true})
	}
	m, _ := loaded(t, &describer{detail: d})
	m.SetSize(80, 200)
	lines := strings.Split(m.View(), "\n")
	var rows []int
	for i, line := range lines {
		if strings.Contains(line, "amq.ctag-worker-") {
			rows = append(rows, i)
		}
	}
	if len(rows) != 3 || rows[1] != rows[0]+1 || rows[2] != rows[1]+1 {
		t.Fatalf("the three consumer rows are on lines %v, want three in a row:\n%s", rows, strings.Join(lines, "\n"))
	}
}

// The figures of one screen agree: the history's "now" is what the
// lines above read, its peak no lower; a DLQ whose depth the broker's
// dead-lettering raises says why its publish rate reads 0, and a rate
// the broker kept no samples of reads as 0 counted, not as a gap.
func TestTheHistoryAgreesWithTheLinesAbove(t *testing.T) {
	q := domain.Queue{Vhost: "/", Name: "orders.dlq", Messages: 15, HasRates: true,
		DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}}
	d := detail(q)
	d.Depth = []domain.Sample{{Value: 9}, {Value: 11}}
	m, _ := loaded(t, &describer{detail: d})
	v := m.View()
	for _, want := range []string{"depth 15", "now 15, peak 15", "publish 0/s (the broker's dead-lettering is not counted)",
		"publish/s  — no samples: the broker counted none in its window (0/s)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the DLQ's screen lacks %q:\n%s", want, v)
		}
	}
	plain := detail(domain.Queue{Vhost: "/", Name: "orders", Messages: 3, HasRates: true})
	m, _ = loaded(t, &describer{detail: plain})
	if v := m.View(); strings.Contains(v, "dead-lettering is not counted") {
		t.Errorf("a queue that is no DLQ says its dead-lettering is not counted:\n%s", v)
	}
}

// A DLQ's rates line is longer than a 160-column screen: it goes on at a
// part, never inside "stats 5s old", and the DLQ's sources stay whole.
func TestTheSummaryBreaksBetweenItsParts(t *testing.T) {
	q := domain.Queue{Vhost: "warren-demo", Name: "orders.dlq", Type: "classic", Durable: true, Node: "rabbit@localhost", Messages: 30, Ready: 30,
		HasRates: true, DLQOf: []domain.QueueRef{{Vhost: "warren-demo", Name: "orders"}, {Vhost: "warren-demo", Name: "orders.invoicing"},
			{Vhost: "warren-demo", Name: "orders.pending-payment"}, {Vhost: "warren-demo", Name: "orders.status"}}, PairedBy: "config"}
	m, _ := loaded(t, &describer{detail: detail(q)})
	for _, width := range []int{160, 100, 80} {
		m.SetSize(width, 200)
		view := ansi.Strip(m.View())
		for _, l := range strings.Split(view, "\n") {
			if ansi.StringWidth(l) > width {
				t.Errorf("width %d: a line of %d cells: %q", width, ansi.StringWidth(l), l)
			}
		}
		for i, whole := range []string{"stats 0s old", "DLQ of orders, orders.invoicing, orders.pending-payment, orders.status (paired by config)",
			"publish 0/s (the broker's dead-lettering is not counted) ·"} {
			if i > 0 && width < 100 {
				break // wider than the line: Wrap breaks it
			}
			if !strings.Contains(view, whole) {
				t.Errorf("width %d: %q is not whole on one line:\n%s", width, whole, view)
			}
		}
	}
}
