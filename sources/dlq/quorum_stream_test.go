//go:build integration

package dlq

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// brokerVersion asks the management API, as warren does.
func brokerVersion(t testing.TB) string {
	t.Helper()
	return testkit.Version(t)
}

// returnEach gets every message of queue and returns it with
// basic.reject, times times: a reject counts toward a quorum queue's
// delivery limit on every version, so each message's delivery count grows
// by exactly that much.
func returnEach(t testing.TB, conn *amqp.Connection, queue string, n, times int) {
	t.Helper()
	ch := testkit.Channel(t, conn)
	for range times {
		var tags []uint64
		for len(tags) < n {
			d, ok, err := ch.Get(queue, false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				tags = append(tags, d.DeliveryTag)
			}
		}
		for _, tag := range tags {
			if err := ch.Reject(tag, true); err != nil {
				t.Fatal(err)
			}
		}
		waitReady(t, conn, queue, n)
	}
}

// Before 4.3 every return counts toward a quorum queue's delivery limit,
// so a DLQ with messages near it is refused unless the operator allows
// the risk, and the override's browse spends one delivery of each. From
// 4.3 the browse returns with basic.nack, which is free: no refusal, and
// the messages keep their count.
func TestQuorumDLQNearItsLimitIsRefusedAndNothingIsDropped(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	const name = "dlq.quorum"
	// No dead-letter exchange: a message pushed past the limit is dropped.
	testkit.Declare(t, ch, name, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
	want := []string{fmtID(0), fmtID(1), fmtID(2), fmtID(3)}
	for _, id := range want {
		publish(t, ch, "", name, amqp.Publishing{MessageId: id})
	}
	waitReady(t, conn, name, len(want))
	returnEach(t, conn, name, len(want), 2)

	q := domain.QueueInfo{Vhost: vhost, Name: name, Type: domain.TypeQuorum, DeliveryLimit: 3, BrokerVersion: brokerVersion(t)}
	freeReturns := testkit.AtLeast(t, 4, 3)
	opts := Options{}
	if !freeReturns {
		_, err := Open(context.Background(), conn, q, Options{})
		var refused *domain.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "delivery limit 3") || !strings.Contains(err.Error(), q.BrokerVersion) {
			t.Fatalf("Open = %v, want a refusal naming the limit and the version", err)
		}
		if _, err := Scan(context.Background(), conn, q, Options{}, nil); !errors.As(err, &refused) {
			t.Fatalf("Scan = %v, want the same refusal", err)
		}
		waitReady(t, conn, name, len(want))
		// The operator's override shows each message's headroom: one
		// more return each, which this browse spends.
		opts.AllowLimitRisk = true
	}

	browse := func() []domain.DeadLetter {
		t.Helper()
		s, err := Open(context.Background(), conn, q, opts)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Letters) != len(want) || len(p.Refused) != 0 {
			t.Fatalf("page: %d letters, %d refused", len(p.Letters), len(p.Refused))
		}
		for _, l := range p.Letters {
			if l.DeliveryCount != 2 || l.Headroom != 1 {
				t.Errorf("%s: delivery count %d headroom %d, want 2 and 1", l.LogicalID, l.DeliveryCount, l.Headroom)
			}
		}
		notes := strings.Join(p.Notes, "\n")
		if !freeReturns && !strings.Contains(notes, "adds one delivery") {
			t.Errorf("notes %q do not warn about the cost", p.Notes)
		}
		if freeReturns && (!strings.Contains(notes, "does not count") || !strings.Contains(notes, "lost channel does")) {
			t.Errorf("notes %q do not say the return is free and a lost channel is not", p.Notes)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		waitReady(t, conn, name, len(want))
		return p.Letters
	}
	got := logicalIDs(browse())
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("quorum DLQ holds %v, want %v", got, want)
	}
	if freeReturns {
		// The first browse cost nothing: the second sees the same counts.
		browse()
	}
}

// TestQuorumReturnsCountAsEachVersionSays is the broker behaviour the
// browse guard rests on (docs/ARCHITECTURE.md §4.2): before 4.3 a basic.nack with
// requeue counts toward the delivery limit; from 4.3 it does not, while
// basic.reject and a channel closing with the message held do on both.
func TestQuorumReturnsCountAsEachVersionSays(t *testing.T) {
	_, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	const name = "q"
	testkit.Declare(t, ch, name, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(10)})
	publish(t, ch, "", name, amqp.Publishing{MessageId: "a"})
	waitReady(t, conn, name, 1)
	get := func(ch *amqp.Channel) amqp.Delivery {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			d, ok, err := ch.Get(name, false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				return d
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s stayed empty", name)
		return amqp.Delivery{}
	}
	count := func(d amqp.Delivery) int64 {
		n, ok := domain.ValueInt(d.Headers[domain.HeaderDeliveryCount])
		if !ok {
			return 0
		}
		return n
	}
	nackCounts := !testkit.AtLeast(t, 4, 3)
	// Each step takes the message on a channel of its own and returns it
	// one way; the next delivery's count says whether that way counted.
	want, after := int64(0), "the first delivery"
	for _, step := range []struct {
		name   string
		counts bool
		ret    func(*amqp.Channel, amqp.Delivery) error
	}{
		{"basic.nack with requeue", nackCounts, func(_ *amqp.Channel, d amqp.Delivery) error { return d.Nack(false, true) }},
		{"basic.reject with requeue", true, func(_ *amqp.Channel, d amqp.Delivery) error { return d.Reject(true) }},
		{"channel closed with the message held", true, func(c *amqp.Channel, _ amqp.Delivery) error { return c.Close() }},
		{"", false, func(_ *amqp.Channel, d amqp.Delivery) error { return d.Ack(false) }},
	} {
		c := testkit.Channel(t, conn)
		d := get(c)
		if got := count(d); got != want {
			t.Errorf("RabbitMQ %s: after %s the delivery count is %d, want %d", brokerVersion(t), after, got, want)
		}
		if err := step.ret(c, d); err != nil {
			t.Fatal(err)
		}
		if step.counts {
			want++
		}
		after = step.name
	}
}

func TestQuorumDLQWithoutLimitIsBrowsedAndSaysOrderIsNotKept(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	const name = "dlq.quorum"
	testkit.Declare(t, ch, name, amqp.Table{"x-queue-type": "quorum"})
	for i := range 3 {
		publish(t, ch, "", name, amqp.Publishing{MessageId: fmtID(i)})
	}
	waitReady(t, conn, name, 3)
	q := domain.QueueInfo{Vhost: vhost, Name: name, Type: domain.TypeQuorum, DeliveryLimit: -1, BrokerVersion: brokerVersion(t)}
	s, err := Open(context.Background(), conn, q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Next(context.Background())
	if err != nil || len(p.Letters) != 3 || !p.End {
		t.Fatalf("page %+v, %v", p, err)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "order") || p.Letters[0].Headroom != -1 {
		t.Errorf("notes %q, headroom %d", p.Notes, p.Letters[0].Headroom)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, conn, name, 3)
}

func TestStreamDLQIsReadByOffsetAndUnchanged(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	const name = "dlq.stream"
	testkit.Declare(t, ch, name, amqp.Table{"x-queue-type": "stream"})
	testkit.Declare(t, ch, "src", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "expired"})
	testkit.Declare(t, ch, "expired", nil)
	var want []string
	for i := range 7 {
		want = append(want, fmtID(i))
		publish(t, ch, "", "src", amqp.Publishing{MessageId: fmtID(i)})
	}
	waitReady(t, conn, "expired", len(want))
	// RabbitMQ 3.10 cannot dead-letter into a stream, so the broker's dead
	// letters are moved there as a shovel would, headers and all.
	for range want {
		d, ok, err := ch.Get("expired", false)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		publish(t, ch, "", name, amqp.Publishing{MessageId: d.MessageId, Headers: d.Headers, Body: d.Body})
		if err := d.Ack(false); err != nil {
			t.Fatal(err)
		}
	}
	q := domain.QueueInfo{Vhost: vhost, Name: name, Type: domain.TypeStream, DeliveryLimit: -1, BrokerVersion: brokerVersion(t)}

	s, err := Open(context.Background(), conn, q, Options{Window: 3})
	if err != nil {
		t.Fatal(err)
	}
	var read []domain.DeadLetter
	var cursors []int64
	for {
		p, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, p.Letters...)
		cursors = append(cursors, p.Cursor)
		if p.End {
			break
		}
	}
	if got := logicalIDs(read); !slices.Equal(got, want) {
		t.Fatalf("stream read %v, want %v", got, want)
	}
	for i, l := range read {
		if l.Offset != int64(i) || l.DeliveryTag != 0 || l.Reason != domain.ReasonExpired || l.OriginQueue != "src" {
			t.Errorf("message %d: offset %d tag %d reason %q origin %q", i, l.Offset, l.DeliveryTag, l.Reason, l.OriginQueue)
		}
	}
	if !slices.Equal(cursors, []int64{3, 6, 7}) {
		t.Errorf("cursors %v, want 3, 6, 7", cursors)
	}
	if err := s.Ack(1); !errors.Is(err, ErrReadOnly) || !s.ReadOnly() {
		t.Errorf("Ack on a stream: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	again := browseAll(t, conn, q, Options{StartOffset: 4})
	if got := logicalIDs(again); !slices.Equal(got, want[4:]) {
		t.Errorf("from offset 4: %v, want %v", got, want[4:])
	}
	if got := logicalIDs(browseAll(t, conn, q, Options{})); !slices.Equal(got, want) {
		t.Errorf("stream changed by browsing: %v", got)
	}
}

// A browsed letter carries the counters each version defines: 4.3 counts
// basic.reject toward x-delivery-count and every acquisition in
// x-acquired-count; before 4.0 every return counts in x-delivery-count
// and there is no x-acquired-count.
func TestABrowsedLetterCarriesEachVersionsDeliveryCounters(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	const name = "dlq.counted"
	testkit.Declare(t, ch, name, amqp.Table{"x-queue-type": "quorum"})
	publish(t, ch, "", name, amqp.Publishing{MessageId: "a"})
	waitReady(t, conn, name, 1)
	for _, reject := range []bool{false, false, true} {
		var d amqp.Delivery
		for ok := false; !ok; {
			var err error
			if d, ok, err = ch.Get(name, false); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if reject {
			err = d.Reject(true)
		} else {
			err = d.Nack(false, true)
		}
		if err != nil {
			t.Fatal(err)
		}
		waitReady(t, conn, name, 1)
	}
	q := domain.QueueInfo{Vhost: vhost, Name: name, Type: domain.TypeQuorum, DeliveryLimit: -1, BrokerVersion: brokerVersion(t)}
	s, err := Open(context.Background(), conn, q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Next(context.Background())
	if err != nil || len(p.Letters) != 1 {
		t.Fatalf("page: %v, %d letters", err, len(p.Letters))
	}
	l := p.Letters[0]
	wantDelivery, wantAcquired := int64(3), int64(-1)
	if testkit.AtLeast(t, 4, 3) {
		wantDelivery, wantAcquired = 1, 3
	}
	if l.DeliveryCount != wantDelivery || l.AcquiredCount != wantAcquired {
		t.Errorf("RabbitMQ %s: x-delivery-count %d, x-acquired-count %d; want %d and %d (-1: absent)",
			brokerVersion(t), l.DeliveryCount, l.AcquiredCount, wantDelivery, wantAcquired)
	}
}
