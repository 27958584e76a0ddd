//go:build integration

package dlq

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

func TestScanCountsTheSceneAndLeavesTheDLQAsItWas(t *testing.T) {
	vhost, conn := testVhost(t)
	buildScene(t, conn)
	q := classicDLQ(vhost)
	o := Options{LogicalID: "header:event_id", OriginDeliveryLimits: map[string]int64{sceneBilling: 2}}
	before := logicalIDs(browseAll(t, conn, q, o))

	var progress []int
	st, err := Scan(context.Background(), conn, q, o, func(n int) { progress = append(progress, n) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 5 || st.Expected != 5 || !st.Complete {
		t.Errorf("total %d of %d, complete %v", st.Total, st.Expected, st.Complete)
	}
	wantReasons := map[string]int{domain.ReasonRejected: 1, domain.ReasonExpired: 1, domain.ReasonMaxLen: 2, domain.ReasonDeliveryLimit: 1}
	wantOrigins := map[string]int{sceneOrders: 1, sceneTTL: 1, sceneCapped: 2, sceneBilling: 1}
	wantAttempts := map[int]int{3: 2, 1: 3}
	if !maps.Equal(st.Reasons, wantReasons) || !maps.Equal(st.Origins, wantOrigins) || !maps.Equal(st.Attempts, wantAttempts) {
		t.Errorf("reasons %v origins %v attempts %v", st.Reasons, st.Origins, st.Attempts)
	}
	if st.Bytes == 0 || st.OldestDeadLettered.IsZero() || st.NewestDeadLettered.Before(st.OldestDeadLettered) || st.NoTime != 0 {
		t.Errorf("bytes %d, oldest %v, newest %v, without time %d", st.Bytes, st.OldestDeadLettered, st.NewestDeadLettered, st.NoTime)
	}
	if len(progress) == 0 || progress[len(progress)-1] != 5 {
		t.Errorf("progress %v, want it to end at 5", progress)
	}
	waitReady(t, conn, sceneDLQ, 5)
	if after := logicalIDs(browseAll(t, conn, q, o)); !slices.Equal(after, before) {
		t.Errorf("after the scan the DLQ holds %v, before %v", after, before)
	}
}

func TestScanCountsReplayLoopsAndQuarantinedMessages(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, sceneDLQ, nil)
	testkit.Declare(t, ch, "src", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
	publish(t, ch, "", "src", amqp.Publishing{MessageId: "a", Headers: amqp.Table{domain.HeaderReplayCount: int32(2)}})
	publish(t, ch, "", "src", amqp.Publishing{MessageId: "b", Headers: amqp.Table{domain.HeaderQuarantineReason: "poison"}})
	publish(t, ch, "", "src", amqp.Publishing{MessageId: "c"})
	waitReady(t, conn, sceneDLQ, 3)
	st, err := Scan(context.Background(), conn, classicDLQ(vhost), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ReplayLoops != 1 || st.Quarantined != 1 || !maps.Equal(st.Attempts, map[int]int{3: 1, 1: 2}) {
		t.Errorf("replay loops %d, quarantined %d, attempts %v", st.ReplayLoops, st.Quarantined, st.Attempts)
	}
	waitReady(t, conn, sceneDLQ, 3)
}

// TestScanOfAHundredThousandDeadLettersKeepsMemoryBounded is docs/ARCHITECTURE.md
// §9's scale figure: the broker dead-letters 100 000 messages of 1 KiB
// (100 MiB of bodies) by max-length, and the scan's heap must stay far
// below what keeping them would take.
func TestScanOfAHundredThousandDeadLettersKeepsMemoryBounded(t *testing.T) {
	const n = 100_000
	vhost, conn := testVhost(t)
	fillByMaxLength(t, conn, n, 1024)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := base.HeapAlloc
	sample := func(int) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapAlloc)
	}
	st, err := Scan(context.Background(), conn, classicDLQ(vhost), Options{}, sample)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != n || st.Reasons[domain.ReasonMaxLen] != n || st.Bytes != n*1024 {
		t.Fatalf("scanned %d (reasons %v, %d bytes), want %d", st.Total, st.Reasons, st.Bytes, n)
	}
	const bound = 48 << 20
	if grew := peak - base.HeapAlloc; grew > bound {
		t.Errorf("heap grew by %d MiB during the scan, bound %d MiB", grew>>20, bound>>20)
	}
	t.Logf("scanned %d dead letters in %s, heap peak +%d MiB", st.Total, st.Took, (peak-base.HeapAlloc)>>20)
	waitReady(t, conn, sceneDLQ, n)
}

// fillByMaxLength has the broker dead-letter n messages into orders.dlq:
// the source queue holds none, so every publish overflows.
func fillByMaxLength(t testing.TB, conn *amqp.Connection, n, size int) {
	t.Helper()
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, sceneDLQ, nil)
	testkit.Declare(t, ch, "src", amqp.Table{"x-max-length": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, size)
	var last *amqp.DeferredConfirmation
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirm("", "src", false, false, amqp.Publishing{MessageId: fmtID(i), Body: body})
		if err != nil {
			t.Fatal(err)
		}
		last = dc
	}
	if ok, err := last.WaitContext(context.Background()); !ok || err != nil {
		t.Fatalf("publishes not confirmed: %v", err)
	}
	waitReady(t, conn, sceneDLQ, n)
}

func TestHistogramCountsLikeAScan(t *testing.T) {
	h := domain.NewHistogram()
	for _, d := range []domain.DeadLetter{
		{Attempts: 3, Reason: domain.ReasonRejected, OriginQueue: "orders"},
		{Attempts: 3, Reason: domain.ReasonRejected, OriginQueue: "orders"},
		{Attempts: 5000, Reason: "", OriginQueue: ""},
	} {
		h.Add(d)
	}
	if !maps.Equal(h.Attempts, map[int]int{3: 2, domain.MaxAttemptsKey: 1}) ||
		!maps.Equal(h.Reasons, map[string]int{domain.ReasonRejected: 2, domain.NoneKey: 1}) ||
		!maps.Equal(h.Origins, map[string]int{"orders": 2, domain.NoneKey: 1}) {
		t.Errorf("histogram %+v", h)
	}
}

// quorumDLQ declares a quorum queue holding n messages and describes it
// as the broker under test does: 4.x sets a delivery limit of 20 by
// default, which a 4.3 scan may hold since its nacks do not count.
func quorumDLQ(t *testing.T, n int) (*amqp.Connection, domain.QueueInfo) {
	t.Helper()
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, sceneDLQ, amqp.Table{"x-queue-type": "quorum"})
	for i := range n {
		publish(t, ch, "", sceneDLQ, amqp.Publishing{MessageId: strconv.Itoa(i), DeliveryMode: amqp.Persistent, Body: []byte("{}")})
	}
	waitReady(t, conn, sceneDLQ, n)
	q := domain.QueueInfo{Vhost: vhost, Name: sceneDLQ, Type: domain.TypeQuorum, DeliveryLimit: -1, BrokerVersion: testkit.Version(t)}
	if testkit.AtLeast(t, 4, 0) {
		q.DeliveryLimit = 20
	}
	return conn, q
}

// A quorum queue reads an unlimited prefetch as 2000: a scan, which holds
// every message until the end, must ask for more, or it stalls there and
// calls itself incomplete.
func TestScanReadsAQuorumQueuePastTwoThousand(t *testing.T) {
	conn, q := quorumDLQ(t, 2500)
	st, err := Scan(context.Background(), conn, q, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 2500 || !st.Complete {
		t.Fatalf("scanned %d of 2500 (complete %v): %v", st.Total, st.Complete, st.Notes)
	}
	waitReady(t, conn, sceneDLQ, 2500)
}

// A scan cancelled halfway returns what it holds by a nack, as a finished
// one does: every message is back, and on 4.3, where a nack is free and a
// closing channel costs a count, none has been counted a delivery.
func TestACancelledQuorumScanReturnsItsMessagesByANack(t *testing.T) {
	conn, q := quorumDLQ(t, 2500)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Scan(ctx, conn, q, Options{}, func(int) { cancel() }); err == nil {
		t.Fatal("the cancelled scan reported no error")
	}
	waitReady(t, conn, sceneDLQ, 2500)
	if !testkit.AtLeast(t, 4, 3) {
		return // before 4.3 every return counts, a nack too
	}
	ch := testkit.Channel(t, conn)
	for range 2500 {
		d, ok, err := ch.Get(sceneDLQ, true)
		if err != nil || !ok {
			t.Fatalf("reading the queue back: %v", err)
		}
		if n, _ := d.Headers["x-delivery-count"].(int64); n > 0 {
			t.Fatalf("message %s was counted %d deliveries by the cancelled scan", d.MessageId, n)
		}
	}
}

// A scan reads the messages the queue held ready at its start, and counts
// those that became ready after it had read them as unread: here another
// client held 500 and gave them back once the scan had read the rest, as
// an export or a browse that just ended gives its messages back while
// the next command reads. Its figures are not the whole queue's, and it
// says so.
func TestAScanCountsWhatBecameReadyAfterItStarted(t *testing.T) {
	vhost, conn := testVhost(t)
	fillByMaxLength(t, conn, 1500, 16)
	q := classicDLQ(vhost)
	holder := testkit.Channel(t, testkit.Dial(t, vhost))
	for range 500 {
		if _, ok, err := holder.Get(sceneDLQ, false); err != nil || !ok {
			t.Fatalf("get: %v, %v", ok, err)
		}
	}
	ch := testkit.Channel(t, conn)
	st, err := scan(context.Background(), conn, q, Options{}, nil, func() {
		if err := holder.Close(); err != nil {
			t.Error(err)
		}
		waitReadyAtLeast(t, ch, 500)
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 1000 || !st.Complete || st.Unread != 500 {
		t.Fatalf("read %d (complete %v), unread %d; want the 1000 ready at the start, and the 500 given back after unread", st.Total, st.Complete, st.Unread)
	}
	if n := len(st.Notes); n == 0 || st.Notes[n-1] != "500 messages became ready after the scan started and are not counted (new dead letters, or messages another client held and gave back, such as an export or a browse that had just ended): scan again for the whole queue" {
		t.Errorf("notes %q", st.Notes)
	}
	waitReady(t, conn, sceneDLQ, 1500)
}

// waitReadyAtLeast waits until the scene's DLQ holds at least n ready.
func waitReadyAtLeast(t *testing.T, ch *amqp.Channel, n int) {
	t.Helper()
	for range 500 {
		q, err := ch.QueueDeclarePassive(sceneDLQ, false, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Messages >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held %d ready", sceneDLQ, n)
}
