package ui

import (
	"context"
	"reflect"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
)

// clock is the fixed "now" of every test in this package.
var clock = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return clock }

func ago(d time.Duration) *time.Time {
	t := clock.Add(-d)
	return &t
}

// scene is a broker at 3 a.m.: an order queue backing up into its DLQ, a
// payment queue without consumers, a queue growing, one draining.
func scene() *domain.Snapshot {
	ordersDLQ := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	paymentsDLQ := domain.QueueRef{Vhost: "/", Name: "payments.dlq"}
	return &domain.Snapshot{
		TakenAt:  clock.Add(-2 * time.Second),
		StatsAge: 5 * time.Second,
		Overview: domain.Overview{
			ClusterName: "rabbit@prod-eu-1", RabbitMQVersion: "3.13.7",
			StatsInterval: 5 * time.Second,
			Totals:        domain.Totals{Messages: 18390, Ready: 18290, Unacked: 100},
			PublishRate:   157, AckRate: 155,
		},
		Nodes: []domain.Node{{Name: "rabbit@node1", Running: true}, {Name: "rabbit@node2", Running: true}},
		Queues: []domain.Queue{
			{Vhost: "/", Name: "orders", Type: "quorum", Durable: true, Messages: 12000, Ready: 11940, Unacked: 60,
				Consumers: 3, PublishRate: 80, AckRate: 100, HeadMessageTimestamp: ago(250 * time.Second),
				HasDLX: true, DeadLetterExchange: "dlx", DLQ: &ordersDLQ, DLQMessages: 37, Node: "rabbit@node1", Members: []string{"rabbit@node1", "rabbit@node2"},
				Arguments: map[string]any{"x-queue-type": "quorum", "x-dead-letter-exchange": "dlx"}},
			{Vhost: "/", Name: "orders.dlq", Type: "classic", Durable: true, Messages: 37, Ready: 37,
				DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}, OldestUnknownReason: "publishers set no timestamp"},
			{Vhost: "/", Name: "payments", Type: "classic", Durable: true, Messages: 5200, Ready: 5200,
				PublishRate: 12, HeadMessageTimestamp: ago(3*time.Hour + 5*time.Minute),
				HasDLX: true, DLQ: &paymentsDLQ, DLQMessages: 3},
			{Vhost: "/", Name: "payments.dlq", Type: "classic", Durable: true, Messages: 3, Ready: 3,
				DLQOf: []domain.QueueRef{{Vhost: "/", Name: "payments"}}, OldestUnknownReason: "publishers set no timestamp"},
			{Vhost: "/", Name: "emails", Type: "classic", Durable: true, Consumers: 2, PublishRate: 5, AckRate: 5,
				OldestUnknownReason: "the queue is empty"},
			{Vhost: "/", Name: "notifications.push.mobile-devices.high-priority", Type: "classic", Messages: 150, Ready: 140,
				Unacked: 10, Consumers: 1, PublishRate: 50, AckRate: 20, HeadMessageTimestamp: ago(9 * time.Second)},
			{Vhost: "billing", Name: "invoices", Type: "quorum", Durable: true, Messages: 800, Ready: 790, Unacked: 10,
				Consumers: 2, PublishRate: 10, AckRate: 30, HeadMessageTimestamp: ago(42 * time.Second)},
			{Vhost: "billing", Name: "evil\x1b[2Jname", Type: "classic", OldestUnknownReason: "the queue is empty"},
		},
	}
}

// fakeBroker serves snapshots and queue details like the management
// client: rates only for the queues asked for, errors while down.
type fakeBroker struct {
	mu    sync.Mutex
	down  error
	calls []domain.SnapshotOptions
	// scene is the broker after n snapshots were asked for; nil is the
	// 3 a.m. scene above.
	scene func(n int) *domain.Snapshot
}

func (f *fakeBroker) now() *domain.Snapshot {
	if f.scene == nil {
		return scene()
	}
	return f.scene(len(f.calls))
}

func (f *fakeBroker) setDown(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = err
}

func (f *fakeBroker) Snapshot(_ context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, o)
	if f.down != nil {
		return nil, f.down
	}
	s := f.now()
	asked := map[domain.QueueRef]bool{}
	for _, r := range o.RatesFor {
		asked[r] = true
	}
	kept := s.Queues[:0]
	for _, q := range s.Queues {
		if o.Vhost != "" && q.Vhost != o.Vhost {
			continue
		}
		q.HasRates = o.AllRates || asked[q.Ref()]
		if !q.HasRates {
			q.PublishRate, q.AckRate = 0, 0
			q.Delayed, q.DLXHeld, q.DLXHeldBytes, q.ReadyReturned, q.DelayedRetry = nil, nil, nil, nil, ""
		}
		kept = append(kept, q)
	}
	s.Queues = kept
	return s, nil
}

func (f *fakeBroker) Queue(_ context.Context, vhost, name string) (*domain.QueueDetail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down != nil {
		return nil, f.down
	}
	for _, q := range f.now().Queues {
		if q.Vhost == vhost && q.Name == name {
			q.HasRates = true
			return detailOf(q), nil
		}
	}
	return nil, &domain.Error{Kind: domain.ErrNotFound, Msg: "queue " + name + " not found"}
}

// detailOf dresses a queue as the queue screen sees it: three consumers
// at their prefetch limit, a publisher channel in confirm mode, findings.
func detailOf(q domain.Queue) *domain.QueueDetail {
	idle := clock.Add(-30 * time.Second)
	d := &domain.QueueDetail{
		Queue:          q,
		TakenAt:        clock.Add(-time.Second),
		StatsAge:       5 * time.Second,
		UnackedUsed:    q.Unacked,
		UnackedAllowed: 60,
		DeliveryLimit:  -1,
		PublishersNote: domain.NoPublisherLinks,
		Findings: []domain.Finding{
			{Check: "quorum-no-delivery-limit", Severity: domain.SeverityWarning, Vhost: q.Vhost, Queue: q.Name,
				Message: "quorum queue with a DLX has no delivery-limit: poison messages loop forever"},
		},
	}
	for i := range 3 {
		ch := "10.0.0.7:50312 -> 10.0.1.2:5672 (" + string(rune('1'+i)) + ")"
		d.Consumers = append(d.Consumers, domain.Consumer{Queue: q.Ref(), Tag: "amq.ctag-orders-worker-" + string(rune('a'+i)),
			Channel: ch, AckRequired: true, PrefetchCount: 20, Active: true, ActivityStatus: "up"})
		d.Channels = append(d.Channels, domain.Channel{Name: ch, User: "orders", PrefetchCount: 20, Unacked: 20,
			Consumers: 1, AckRate: 33.3})
	}
	d.Channels[2].ConfirmMode, d.Channels[2].Unconfirmed, d.Channels[2].IdleSince = true, 4, &idle
	for i := range 60 {
		at := clock.Add(time.Duration(i-60) * 10 * time.Second)
		d.Depth = append(d.Depth, domain.Sample{At: at, Value: float64(9000 + 50*i)})
		d.PublishRates = append(d.PublishRates, domain.Sample{At: at, Value: 80})
		d.AckRates = append(d.AckRates, domain.Sample{At: at, Value: float64(60 + i%40)})
	}
	return d
}

func errUnreachable() error {
	return &domain.Error{Kind: domain.ErrUnreachable, Msg: "management API at http://127.0.0.1:15672 unreachable: connection refused"}
}

// asCmds opens tea.Sequence's message, a slice of commands of an
// unexported type.
func asCmds(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeFor[tea.Cmd]() {
		return nil, false
	}
	out := make([]tea.Cmd, v.Len())
	for i := range out {
		out[i] = v.Index(i).Interface().(tea.Cmd)
	}
	return out, true
}
