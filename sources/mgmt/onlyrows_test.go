//go:build integration

package mgmt

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// A dashboard that holds the list of every queue reads the rows on screen
// one by one between two lists: each with its live depth and settings,
// and its statistics; a deleted one is named, not dropped silently.
func TestASnapshotOfSomeRowsReadsThemAloneWithTheirDepths(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("work", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"})
	e.queue("work.dlq", nil)
	e.queue("other", nil)
	e.queue("doomed", nil)
	e.publish("work", 4, nil)
	e.publish("work.dlq", 2, nil)
	work, dlq := domain.QueueRef{Vhost: e.vhost, Name: "work"}, domain.QueueRef{Vhost: e.vhost, Name: "work.dlq"}
	doomed := domain.QueueRef{Vhost: e.vhost, Name: "doomed"}
	if _, err := e.channel().QueueDelete("doomed", false, false, false); err != nil {
		t.Fatal(err)
	}
	// The depths come from the queues' own figures, which they emit
	// every few seconds, as the list's do.
	s := e.snapshot(domain.SnapshotOptions{OnlyRows: true, RatesFor: []domain.QueueRef{dlq, work, doomed, work}}, func(s *domain.Snapshot) bool {
		return len(s.Queues) == 2 && s.Queues[0].Messages == 2 && s.Queues[1].Messages == 4 && s.Queues[1].HasRates
	})
	if !s.OnlyRows || len(s.Queues) != 2 {
		t.Fatalf("OnlyRows=%v with %d queues (%s), want the two read alone", s.OnlyRows, len(s.Queues), describe(s))
	}
	if s.Queues[0].Ref() != dlq || s.Queues[1].Ref() != work {
		t.Fatalf("queues %s, want work.dlq then work, each once", describe(s))
	}
	if got := s.Queues[0].Messages; got != 2 {
		t.Errorf("work.dlq read with %d messages, want 2", got)
	}
	w := s.Queues[1]
	if w.Messages != 4 || w.Ready != 4 || !w.HasDLX || w.DeadLetterRoutingKey != "work.dlq" {
		t.Errorf("work read as %+v, want 4 messages and its dead-letter settings", w)
	}
	// Pairing needs every queue: a read of some leaves it to the list.
	if w.DLQ != nil || len(s.Queues[0].DLQOf) != 0 {
		t.Errorf("a read of some rows paired DLQs: %+v", w.DLQ)
	}
	if len(s.Gone) != 1 || s.Gone[0] != doomed {
		t.Errorf("Gone = %v, want the deleted queue", s.Gone)
	}
	if s.Overview.RabbitMQVersion == "" || len(s.Nodes) == 0 {
		t.Errorf("a read of some rows has no header: %+v %+v", s.Overview, s.Nodes)
	}
}
