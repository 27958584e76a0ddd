//go:build integration

package ops

import (
	"fmt"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/testkit"
)

// An export reads every message the queue held when it started, and says
// what the queue holds beside: messages that became ready after it
// started (here, dead letters that came while it read) and the
// consumers of other clients, whose unacknowledged messages it cannot
// see. An operator keeping a copy before a purge must not take the file
// for the whole queue.
func TestAnExportCountsWhatTheQueueHoldsThatItDidNotRead(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 5)
	ch := testkit.Channel(t, testConn(t, vhost))
	// Another client holds two of them, unacknowledged.
	holder := testkit.Channel(t, testConn(t, vhost))
	if err := holder.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	held, err := holder.Consume("orders.dlq", "holder", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		<-held
	}
	testkit.WaitUnacked(t, vhost, "orders.dlq", 2)
	l := newOps(t, &config.Context{Name: "test", Username: "guest"})
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	var ids []string
	res, err := l.Export(testCtx(t), ExportScope{Queue: ref, Begin: func(*Target) error {
		// Two more dead letters arrive once the export has started.
		testkit.DeadLetter(t, ch, "orders", "orders.dlq", orderEvents(7)[5:])
		return nil
	}}, func(d domain.DeadLetter) error {
		ids = append(ids, d.MessageID)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Read != 3 || len(ids) != 3 || ids[0] != "m-ev-c" {
		t.Fatalf("read %d: %v; want the 3 the queue held ready at the start, from m-ev-c", res.Read, ids)
	}
	if res.Unread != 2 || res.Consumers != 1 || res.Held != 2 {
		t.Errorf("unread %d, consumers %d, held %d; want the 2 that arrived after the start, and the holder with its 2", res.Unread, res.Consumers, res.Held)
	}
	// Nothing was taken: the 3 read and the 2 arrived are ready again,
	// the holder still holds its 2.
	testkit.WaitDepth(t, ch, "orders.dlq", 5)
}

// A quorum queue keeps counting a cancelled consumer while it holds
// deliveries: an export that moves to a fresh consumer every half
// window must not take its own for another client's.
func TestAnExportOfAQuorumDLQCountsNoConsumerOfItsOwn(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "work.dlq", amqp.Table{"x-queue-type": "quorum"})
	testkit.Declare(t, ch, "work", amqp.Table{"x-max-length": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"})
	const n = dlq.DefaultFeedWindow/2 + 1000 // a second consumer at least
	for i := range n {
		if err := ch.Publish("", "work", false, false, amqp.Publishing{MessageId: fmt.Sprint("m-", i), Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, ch, "work.dlq", n)
	l := newOps(t, &config.Context{Name: "test", Username: "guest"})
	res, err := l.Export(testCtx(t), ExportScope{Queue: domain.QueueRef{Vhost: vhost, Name: "work.dlq"}},
		func(domain.DeadLetter) error { return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Read != n || res.Consumers != 0 || res.Unread != 0 {
		t.Errorf("read %d of %d, consumers %d, unread %d; want every message, and nothing said of the export's own consumers", res.Read, n, res.Consumers, res.Unread)
	}
	testkit.WaitDepth(t, ch, "work.dlq", n)
}
