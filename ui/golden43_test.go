package ui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/domain"
)

func count(n int64) *int64 { return &n }

// scene43 is a RabbitMQ 4.3 broker: orders retries failed deliveries
// after a delay and dead-letters at least once into orders.dlq, which is
// full, so the dead letters orders holds for its DLX grow with every
// snapshot; invoices holds only messages waiting out their delay; emails
// is a classic queue, which reports neither figure.
func scene43(n int) *domain.Snapshot {
	ordersDLQ := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	held := 4 + 3*int64(n)
	retry := map[string]any{"x-queue-type": "quorum", "x-delayed-retry-type": "failed", "x-delayed-retry-min": float64(1000), "x-delayed-retry-max": float64(30000)}
	orders := map[string]any{"x-dead-letter-exchange": "dlx", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"}
	for k, v := range retry {
		orders[k] = v
	}
	return &domain.Snapshot{
		TakenAt:  clock.Add(-2 * time.Second),
		StatsAge: 5 * time.Second,
		Overview: domain.Overview{
			ClusterName: "rabbit43@prod-eu-1", RabbitMQVersion: "4.3.6", StatsInterval: 5 * time.Second,
			Totals:      domain.Totals{Messages: 1250 + held, Ready: 1200, Unacked: 10},
			PublishRate: 95, AckRate: 90,
		},
		Nodes: []domain.Node{{Name: "rabbit43@node1", Running: true}},
		Queues: []domain.Queue{
			{Vhost: "/", Name: "orders", Type: "quorum", Durable: true, Messages: 1250 + held, Ready: 1200, Unacked: 10,
				Delayed: count(40), DLXHeld: count(held), DLXHeldBytes: count(held * 310), ReadyReturned: count(25),
				DelayedRetry: "failed (min: 1000ms, max: 30000ms)",
				Consumers:    3, PublishRate: 80, AckRate: 85, HasDLX: true, DeadLetterExchange: "dlx", DLQ: &ordersDLQ, DLQMessages: 1,
				OldestUnknownReason: "quorum queues report no head message timestamp",
				Node:                "rabbit43@node1", Members: []string{"rabbit43@node1"}, Arguments: orders},
			{Vhost: "/", Name: "orders.dlq", Type: "quorum", Durable: true, Messages: 1, Ready: 1, Delayed: count(0), DLXHeld: count(0),
				DelayedRetry: "disabled", DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}},
				OldestUnknownReason: "quorum queues report no head message timestamp",
				Arguments:           map[string]any{"x-queue-type": "quorum", "x-max-length": float64(1), "x-overflow": "reject-publish"}},
			{Vhost: "/", Name: "invoices", Type: "quorum", Durable: true, Messages: 3, Delayed: count(3), DLXHeld: count(0),
				DelayedRetry: "failed (min: 1000ms, max: 30000ms)", Consumers: 1,
				OldestUnknownReason: "quorum queues report no head message timestamp", Arguments: retry},
			{Vhost: "billing", Name: "emails", Type: "classic", Durable: true, Messages: 12, Ready: 12, Consumers: 2, PublishRate: 5, AckRate: 6,
				HeadMessageTimestamp: ago(3 * time.Second)},
		},
	}
}

// On 4.3 the overview grows a DELAYED column (— where the broker reports
// no figure), invoices reads "delayed" rather than empty, and orders,
// whose DLX backlog rose between two snapshots, is marked in trouble
// with the note saying why.
func TestOverview43Golden(t *testing.T) {
	tm := teatest.NewTestModel(t, goldenModel(&fakeBroker{scene: scene43}, time.Hour), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "ETA")
	// One more snapshot: the backlog has grown since the last.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	waitFor(t, tm, "DLX backlog growing")
	golden.RequireEqual(t, finalView(t, tm))
}

// The screen is tall enough for every channel row, the one in confirm
// mode last.
func TestQueueScreen43Golden(t *testing.T) {
	tm := teatest.NewTestModel(t, goldenModel(&fakeBroker{scene: scene43}, time.Hour), teatest.WithInitialTermSize(120, 46))
	waitFor(t, tm, "ETA")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "delayed retry")
	golden.RequireEqual(t, finalView(t, tm))
}
