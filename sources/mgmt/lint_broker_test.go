//go:build integration

package mgmt

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

func lintVhost(t *testing.T, e *env) []string {
	t.Helper()
	s, err := e.c.Snapshot(context.Background(), domain.SnapshotOptions{Vhost: e.vhost, AllRates: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range domain.Lint(s) {
		got = append(got, f.Check+" "+f.Queue)
	}
	sort.Strings(got)
	return got
}

func TestLintOnTheBrokerFiresOnEveryTrippedCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exchange("dlx", "direct")
	e.exchange("dlx.unbound", "fanout")
	e.queue("dead", nil)
	e.bind("dead", "dead", "dlx")
	toDead := func(more amqp.Table) amqp.Table {
		a := amqp.Table{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "dead"}
		for k, v := range more {
			a[k] = v
		}
		return a
	}
	e.queue("lost.missing", amqp.Table{"x-dead-letter-exchange": "no-such-exchange"})
	e.queue("lost.unbound", amqp.Table{"x-dead-letter-exchange": "dlx.unbound"})
	e.queue("alo", toDead(amqp.Table{"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-delivery-limit": 5}))
	e.queue("capped", toDead(amqp.Table{"x-max-length": 5, "x-overflow": "drop-head"}))
	e.queue("qdead", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 3})
	e.bind("qdead", "qdead", "dlx")
	e.queue("to-qdead", amqp.Table{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "qdead"})
	e.queue("cdead", nil)
	e.bind("cdead", "cdead", "dlx")
	e.queue("to-cdead", amqp.Table{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "cdead"})
	if _, err := e.channel().Consume("cdead", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	e.policy("loop", `^loop$`, map[string]any{"dead-letter-exchange": "dlx", "dead-letter-routing-key": "dead"})
	e.queue("loop", amqp.Table{"x-queue-type": "quorum"})
	e.queue("dropper", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 4})
	e.queue("plain.quorum", amqp.Table{"x-queue-type": "quorum"})

	want := []string{
		"dlq-has-consumers cdead",
		"dlx-at-least-once-overflow alo",
		"dlx-missing lost.missing",
		"dlx-unroutable lost.unbound",
		"overflow-drop-head capped",
		"quorum-limit-no-dlx dropper",
	}
	// From 4.0 a quorum queue without a delivery limit has the default
	// of 20: a poison message cannot loop there, and without a DLX it is
	// dropped after 20 returns.
	// From 4.3 a browse's return costs no delivery.
	if !testkit.AtLeast(t, 4, 3) {
		want = append(want, "dlq-quorum-delivery-limit qdead")
	}
	if testkit.AtLeast(t, 4, 0) {
		want = append(want, "quorum-limit-no-dlx plain.quorum")
	} else {
		want = append(want, "quorum-no-delivery-limit loop")
	}
	sort.Strings(want)
	// Consumer counts and policies reach the API asynchronously.
	waitFor(t, 20*time.Second, func() (bool, string) {
		got := lintVhost(t, e)
		return slices.Equal(got, want), fmt.Sprint(got)
	})
}

func TestLintOnTheBrokerIsSilentOnAHealthyTopology(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exchange("dlx", "topic")
	e.queue("orders.dlq", nil)
	e.bind("orders.dlq", "orders.#", "dlx")
	e.queue("orders", amqp.Table{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.failed"})
	e.queue("payments.dlq", nil)
	e.policy("payments", `^payments$`, map[string]any{"dead-letter-exchange": "", "dead-letter-routing-key": "payments.dlq", "delivery-limit": 5})
	e.queue("payments", amqp.Table{"x-queue-type": "quorum"})
	e.queue("capped", amqp.Table{"x-max-length": 100, "x-overflow": "reject-publish"})
	if _, err := e.channel().Consume("orders", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	// The policy applies asynchronously: wait until payments is paired.
	e.snapshot(domain.SnapshotOptions{}, func(s *domain.Snapshot) bool {
		q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: "payments"})
		return q != nil && q.DLQ != nil
	})
	if got := lintVhost(t, e); len(got) != 0 {
		t.Fatalf("healthy topology gave findings %v", got)
	}
}

// An at-least-once quorum queue whose dead-letter target is full
// (reject-publish at its limit) keeps its dead letters and reports them
// as messages_dlx (3.10 does for at-least-once queues, 4.3 for every
// quorum queue); lint says so and why.
func TestLintExplainsADeadLetterBacklogHeldByAQuorumQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("held.dlq", amqp.Table{"x-max-length": 1, "x-overflow": "reject-publish"})
	e.queue("held", amqp.Table{"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once",
		"x-overflow": "reject-publish", "x-delivery-limit": 5,
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "held.dlq"})
	e.publish("held", 3, nil)
	ch := e.channel()
	for range 3 {
		d, ok, err := ch.Get("held", false)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, func() (bool, string) {
		s, err := e.c.Snapshot(context.Background(), domain.SnapshotOptions{Vhost: e.vhost, AllRates: true})
		if err != nil {
			return false, err.Error()
		}
		for _, f := range domain.Lint(s) {
			if f.Check == domain.CheckDLXBacklog && f.Queue == "held" {
				return strings.Contains(f.Message, "2 dead letters are held") && strings.Contains(f.Message, "the target held.dlq is full (1 of max-length 1"), f.Message
			}
		}
		return false, "no dlx-backlog finding"
	})
}

// Queues that dead-letter into each other by expiry alone lose what
// comes round: the broker drops a message that reaches a queue it went
// through when nothing rejected it on the way. lint names each queue of
// such a cycle, and leaves a retry loop whose consumer rejects alone.
func TestLintNamesADeadLetterCycleTheBrokerDropsFrom(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	toVia := func(q string, more amqp.Table) amqp.Table {
		a := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": q}
		for k, v := range more {
			a[k] = v
		}
		return a
	}
	ttl := amqp.Table{"x-message-ttl": int32(50)}
	e.queue("ring.a", toVia("ring.b", ttl))
	e.queue("ring.b", toVia("ring.a", ttl))
	e.queue("self", toVia("self", ttl))
	// A retry loop: work has no TTL, its consumer rejects into wait,
	// whose TTL sends the message back.
	e.queue("work", toVia("wait", nil))
	e.queue("wait", toVia("work", ttl))
	want := []string{"dlx-cycle ring.a", "dlx-cycle ring.b", "dlx-cycle self"}
	waitFor(t, 20*time.Second, func() (bool, string) {
		var got []string
		for _, f := range lintVhost(t, e) {
			if strings.HasPrefix(f, "dlx-cycle") {
				got = append(got, f)
			}
		}
		return slices.Equal(got, want), fmt.Sprint(got)
	})

	// What lint says is what the broker does: a message sent round the
	// ring (confirmed into ring.a) is gone; one that went on circling
	// would be in one of the two whenever they are counted.
	e.publish("ring.a", 1, nil)
	ch := e.channel()
	depth := func(q string) int {
		info, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return info.Messages
	}
	waitFor(t, 20*time.Second, func() (bool, string) {
		a, b := depth("ring.a"), depth("ring.b")
		time.Sleep(200 * time.Millisecond)
		a2, b2 := depth("ring.a"), depth("ring.b")
		return a+b+a2+b2 == 0, fmt.Sprintf("ring.a %d then %d, ring.b %d then %d", a, a2, b, b2)
	})
}
