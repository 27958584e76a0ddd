package dlq

import (
	"context"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/sources/brokertest"
)

// feedScene has the broker dead-letter n messages (evt-0000, ...) into the
// scene's DLQ through a zero TTL.
func feedScene(t *testing.T, n int) (QueueInfo, *amqp.Connection, []string) {
	t.Helper()
	vhost, conn := testVhost(t)
	ch := brokertest.Channel(t, conn)
	brokertest.Declare(t, ch, "src", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
	brokertest.Declare(t, ch, sceneDLQ, nil)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmtID(i)
		publish(t, ch, "", "src", amqp.Publishing{MessageId: ids[i], Body: []byte(ids[i])})
	}
	waitReady(t, conn, sceneDLQ, n)
	return classicDLQ(vhost), conn, ids
}

// drain reads the whole feed, acking the letters keep says no to.
func drain(t *testing.T, f *Feed, keep func(DeadLetter) bool) (taken []DeadLetter) {
	t.Helper()
	ctx := context.Background()
	for {
		page, end, err := f.Next(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			if keep(d) {
				f.Keep(1)
				continue
			}
			if err := f.Ack(d.DeliveryTag); err != nil {
				t.Fatal(err)
			}
		}
		taken = append(taken, page...)
		if end {
			return taken
		}
	}
}

func TestAFeedReturnsWhatItKeepsInOrderWithFreshConsumers(t *testing.T) {
	q, conn, ids := feedScene(t, 1000)
	// A window of 64 with every other message kept: the kept ones fill
	// half a consumer's prefetch every 64 messages, so the feed needs
	// many consumers to read past what one could hold.
	f, err := OpenFeed(conn, q, Options{}, len(ids), 64)
	if err != nil {
		t.Fatal(err)
	}
	odd := func(d DeadLetter) bool { return d.Position%2 == 1 }
	taken := drain(t, f, odd)
	if got := logicalIDs(taken); !slices.Equal(got, ids) {
		t.Fatalf("the feed handed out %d messages out of order or incomplete", len(got))
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.consumed < 10 {
		t.Errorf("%d consumers read 500 kept messages through a window of 64; want a fresh one each half window", f.consumed)
	}
	var want []string
	for i, id := range ids {
		if i%2 == 1 {
			want = append(want, id)
		}
	}
	waitReady(t, conn, sceneDLQ, len(want))
	if got := logicalIDs(browseAll(t, conn, q, Options{})); !slices.Equal(got, want) {
		t.Errorf("after the feed, the queue holds %d messages %v…, want the %d kept ones in order", len(got), got[:min(5, len(got))], len(want))
	}
}

func TestAFeedTakesNoMoreThanItsLimit(t *testing.T) {
	q, conn, ids := feedScene(t, 100)
	f, err := OpenFeed(conn, q, Options{}, 60, 0)
	if err != nil {
		t.Fatal(err)
	}
	taken := drain(t, f, func(DeadLetter) bool { return false })
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := logicalIDs(taken); !slices.Equal(got, ids[:60]) {
		t.Fatalf("took %d messages, want the first 60", len(got))
	}
	waitReady(t, conn, sceneDLQ, 40)
	if got := logicalIDs(browseAll(t, conn, q, Options{})); !slices.Equal(got, ids[60:]) {
		t.Errorf("left %v, want the last 40 in order", got)
	}
}

func TestAFeedRefusesAStreamAndARiskyQuorumQueue(t *testing.T) {
	_, conn := testVhost(t)
	if _, err := OpenFeed(conn, QueueInfo{Name: "s", Type: TypeStream}, Options{}, 1, 0); err == nil || !strings.Contains(err.Error(), "stream") {
		t.Errorf("stream: %v, want a refusal naming the stream", err)
	}
	q := QueueInfo{Name: "q", Type: TypeQuorum, DeliveryLimit: 5, BrokerVersion: "3.10.8"}
	if _, err := OpenFeed(conn, q, Options{}, 1, 0); err == nil || !strings.Contains(err.Error(), "delivery limit 5") {
		t.Errorf("quorum with a limit on 3.10: %v, want the guard's refusal", err)
	}
}
