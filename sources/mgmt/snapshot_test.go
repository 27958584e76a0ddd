//go:build integration

package mgmt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

func TestSnapshotDepthsEqualTheBrokers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("work", nil)
	e.queue("votes", amqp.Table{"x-queue-type": "quorum"})
	e.publish("work", 7, nil)
	e.publish("votes", 3, nil)
	ch := e.channel()
	if err := ch.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume("work", "holder", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}

	want := map[string][3]int64{"work": {7, 5, 2}, "votes": {3, 3, 0}}
	s := e.snapshot(domain.SnapshotOptions{}, func(s *domain.Snapshot) bool {
		for name, w := range want {
			q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: name})
			if q == nil || [3]int64{q.Messages, q.Ready, q.Unacked} != w {
				return false
			}
		}
		return true
	})
	// The broker's own count of ready messages, through AMQP.
	for name, w := range want {
		info, err := e.channel().QueueDeclarePassive(name, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if int64(info.Messages) != w[1] {
			t.Fatalf("%s: broker says %d ready, snapshot %d", name, info.Messages, w[1])
		}
	}
	if s.Overview.RabbitMQVersion == "" || len(s.Nodes) == 0 || !s.Nodes[0].Running || s.Nodes[0].MemLimit == 0 {
		t.Fatalf("overview %+v nodes %+v", s.Overview, s.Nodes)
	}
	if q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: "votes"}); q.Type != "quorum" || q.Node == "" {
		t.Fatalf("quorum queue read as %+v", q)
	}
	if s.StatsAge < domain.DefaultStatsInterval || s.TakenAt.IsZero() {
		t.Fatalf("stats age %v, taken at %v", s.StatsAge, s.TakenAt)
	}
}

func TestSnapshotPairsDLQThroughAnArgument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exchange("orders.dlx", "direct")
	e.queue("orders.dlq", nil)
	e.bind("orders.dlq", "orders", "orders.dlx")
	e.queue("orders", amqp.Table{"x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders"})
	e.publish("orders", 2, nil)
	rejectAll(t, e, "orders", 2)

	s := e.snapshot(domain.SnapshotOptions{}, func(s *domain.Snapshot) bool {
		q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: "orders"})
		return q != nil && q.DLQMessages == 2
	})
	q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: "orders"})
	dlq := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: "orders.dlq"})
	if q.DLQ == nil || *q.DLQ != dlq.Ref() || !dlq.IsDLQ() || dlq.DLQOf[0] != q.Ref() || q.IsDLQ() {
		t.Fatalf("pairing: orders.DLQ=%v, orders.dlq.DLQOf=%v", q.DLQ, dlq.DLQOf)
	}
	if q.DeadLetterExchange != "orders.dlx" || q.DeadLetterRoutingKey != "orders" {
		t.Fatalf("DLX settings %q %q", q.DeadLetterExchange, q.DeadLetterRoutingKey)
	}
}

func TestSnapshotPairsDLQThroughAPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exchange("dead", "fanout")
	e.queue("mail.dead", nil)
	e.bind("mail.dead", "", "dead")
	e.policy("dead-letters", `^mail$`, map[string]any{"dead-letter-exchange": "dead", "message-ttl": 1})
	e.queue("mail", nil)
	e.publish("mail", 3, nil) // they expire and the broker dead-letters them

	s := e.snapshot(domain.SnapshotOptions{}, func(s *domain.Snapshot) bool {
		q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: "mail"})
		return q != nil && q.Policy == "dead-letters" && q.DLQMessages == 3
	})
	q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: "mail"})
	if q.DLQ == nil || q.DLQ.Name != "mail.dead" || !q.HasDLX || q.Arguments["x-dead-letter-exchange"] != nil {
		t.Fatalf("pairing through the policy: %+v", q)
	}
}

// rejectAll consumes n messages from queue and rejects them without
// requeue, so the broker dead-letters them.
func rejectAll(t *testing.T, e *env, queue string, n int) {
	t.Helper()
	ch := e.channel()
	msgs, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		select {
		case m := <-msgs:
			if err := m.Nack(false, false); err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no delivery from %s", queue)
		}
	}
}

func TestSnapshotOldestAge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("stamped", nil)
	e.queue("unstamped", nil)
	e.queue("votes", amqp.Table{"x-queue-type": "quorum"})
	published := time.Now().Add(-90 * time.Second)
	stamp := func(int) amqp.Publishing { return amqp.Publishing{Timestamp: published, Body: []byte("m")} }
	e.publish("stamped", 3, stamp)
	e.publish("unstamped", 3, nil)
	e.publish("votes", 3, stamp)
	refs := []domain.QueueRef{{Vhost: e.vhost, Name: "stamped"}, {Vhost: e.vhost, Name: "unstamped"}, {Vhost: e.vhost, Name: "votes"}}

	s := e.snapshot(domain.SnapshotOptions{RatesFor: refs}, func(s *domain.Snapshot) bool {
		for _, r := range refs {
			// Until the broker has collected statistics for a queue, its
			// age is unknown for that reason, not the one under test.
			if q := s.Queue(r); q == nil || q.Ready != 3 || !q.HasRates || strings.Contains(q.OldestUnknownReason, "not collected") {
				return false
			}
		}
		return s.Queue(refs[0]).HeadMessageTimestamp != nil
	})
	age, ok := s.Queue(refs[0]).OldestAge(time.Now())
	if !ok || age < 89*time.Second || age > 120*time.Second {
		t.Fatalf("oldest age of a timestamped classic queue = %v, %v; want about 90 s", age, ok)
	}
	for _, c := range []struct {
		ref    domain.QueueRef
		reason string
	}{{refs[1], "timestamp property"}, {refs[2], "quorum"}} {
		q := s.Queue(c.ref)
		if _, ok := q.OldestAge(time.Now()); ok || !strings.Contains(q.OldestUnknownReason, c.reason) || !q.HasRates {
			t.Fatalf("%s: oldest age known=%v reason %q; want unknown because %s", c.ref.Name, ok, q.OldestUnknownReason, c.reason)
		}
	}
}

func allPrefetch(chs []domain.Channel, n int) bool {
	for _, ch := range chs {
		if ch.PrefetchCount != n {
			return false
		}
	}
	return true
}

func TestQueueDetailShowsUnackedAgainstPrefetch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("work", nil)
	e.publish("work", 100, nil)
	for i := 0; i < 3; i++ {
		ch := e.channel()
		if err := ch.Qos(20, 0, false); err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Consume("work", "", false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	var d *domain.QueueDetail
	waitFor(t, 20*time.Second, func() (bool, string) {
		var err error
		d, err = e.c.Queue(context.Background(), e.vhost, "work")
		if err != nil {
			t.Fatal(err)
		}
		// A channel's statistics lag its qos by up to one statistics
		// interval, so its prefetch is waited for too.
		return d.UnackedUsed == 60 && len(d.Consumers) == 3 && len(d.Channels) == 3 && d.Queue.Consumers == 3 &&
			allPrefetch(d.Channels, 20), fmtDetail(d)
	})
	if d.UnackedAllowed != 60 || d.UnackedUnlimited {
		t.Fatalf("allowed %d unlimited %v, want 60 of 3 consumers × prefetch 20", d.UnackedAllowed, d.UnackedUnlimited)
	}
	for _, ch := range d.Channels {
		if ch.PrefetchCount != 20 || ch.ConfirmMode {
			t.Fatalf("channel %+v", ch)
		}
	}
	for _, co := range d.Consumers {
		if !co.AckRequired || co.PrefetchCount != 20 || co.Queue.Name != "work" {
			t.Fatalf("consumer %+v", co)
		}
	}
	if len(d.Depth) == 0 || d.DeliveryLimit != -1 || d.Queue.Consumers != 3 {
		t.Fatalf("history %d samples, delivery limit %d, consumers %d", len(d.Depth), d.DeliveryLimit, d.Queue.Consumers)
	}
}

func fmtDetail(d *domain.QueueDetail) string {
	return fmt.Sprintf("%s consumers %d, channels %d, unacked %d/%d", describe(&domain.Snapshot{Queues: []domain.Queue{d.Queue}}),
		len(d.Consumers), len(d.Channels), d.UnackedUsed, d.UnackedAllowed)
}

func TestOddNamesAndTheDefaultVhostAreEscaped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const odd = "odd/name ?#%+ü"
	e.queue(odd, nil)
	e.publish(odd, 2, nil)
	d, err := e.c.Queue(context.Background(), e.vhost, odd)
	if err != nil || d.Queue.Name != odd || d.Queue.Messages != 2 {
		t.Fatalf("queue %q: %v %+v", odd, err, d)
	}
	if _, err := e.c.Snapshot(context.Background(), domain.SnapshotOptions{Vhost: "/"}); err != nil {
		t.Fatalf("snapshot of vhost /: %v", err)
	}
	_, err = e.c.Snapshot(context.Background(), domain.SnapshotOptions{Vhost: e.vhost + "-missing"})
	if !errors.Is(err, domain.ErrNotFound) || !strings.Contains(err.Error(), "vhost") {
		t.Fatalf("missing vhost: %v", err)
	}
}

// On a 3.10 broker /api/queues/detailed is a 404 (it reads as vhost
// "detailed"), as on a 3.13 cluster whose feature flag is still off: the
// client falls back to /api/queues with columns and remembers it. 4.3
// serves /api/queues/detailed but answers its per-vhost form with 404:
// the fallback for one vhost must not stop the listing of all vhosts
// from using the detailed endpoint.
func TestStatsListFallsBackWhenTheDetailedEndpointIsMissing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("work", nil)
	e.c.mu.Lock()
	e.c.version = "3.13.7"
	e.c.mu.Unlock()
	// A queue seconds old is listed without statistics until the broker
	// emits them.
	waitFor(t, 20*time.Second, func() (bool, string) {
		qs, err := e.c.listQueuesStats(context.Background(), e.vhost)
		return err == nil && len(qs) == 1 && qs[0].HasRates && !qs[0].StatsPending, fmt.Sprintf("%v %+v", err, qs)
	})
	e.c.mu.Lock()
	missing := e.c.detailedMissing
	e.c.mu.Unlock()
	if !missing[1] {
		t.Fatal("the missing per-vhost detailed endpoint was not remembered")
	}
	if missing[0] {
		t.Fatal("a 404 on the per-vhost form disabled /api/queues/detailed too")
	}
	all, err := e.c.listQueuesStats(context.Background(), "")
	if err != nil {
		t.Fatalf("all vhosts: %v", err)
	}
	found := false
	for _, q := range all {
		found = found || q.Vhost == e.vhost && q.Name == "work" && q.HasRates
	}
	if !found {
		t.Fatal("the listing of every vhost lacks the test's queue with its statistics")
	}
	e.c.mu.Lock()
	missing = e.c.detailedMissing
	e.c.mu.Unlock()
	if got, want := missing[0], !testkit.AtLeast(t, 3, 13); got != want {
		t.Fatalf("RabbitMQ %s: /api/queues/detailed remembered missing = %v, want %v", testkit.Version(t), got, want)
	}
}
