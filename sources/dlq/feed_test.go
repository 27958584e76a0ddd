//go:build integration

package dlq

import (
	"context"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// feedScene has the broker dead-letter n messages (evt-0000, ...) into the
// scene's DLQ through a zero TTL.
func feedScene(t *testing.T, n int) (domain.QueueInfo, *amqp.Connection, []string) {
	t.Helper()
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "src", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
	testkit.Declare(t, ch, sceneDLQ, nil)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmtID(i)
		publish(t, ch, "", "src", amqp.Publishing{MessageId: ids[i], Body: []byte(ids[i])})
	}
	waitReady(t, conn, sceneDLQ, n)
	return classicDLQ(vhost), conn, ids
}

// drain reads the whole feed, acking the letters keep says no to.
func drain(t *testing.T, f *Feed, keep func(domain.DeadLetter) bool) (taken []domain.DeadLetter) {
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

// drainKeepingOdd reads the whole feed, keeping every other letter and
// acking the rest, checks it handed out ids in order, and proves the acks.
func drainKeepingOdd(t *testing.T, f *Feed, ids []string) {
	t.Helper()
	taken := drain(t, f, func(d domain.DeadLetter) bool { return d.Position%2 == 1 })
	if got := logicalIDs(taken); !slices.Equal(got, ids) {
		t.Fatalf("the feed handed out %d messages out of order or incomplete", len(got))
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// oddOnesBack checks that, once the feed closed, the queue holds the
// kept ones, every other of ids, in order.
func oddOnesBack(t *testing.T, conn *amqp.Connection, q domain.QueueInfo, ids []string) {
	t.Helper()
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

func TestAFeedReturnsWhatItKeepsInOrderWithFreshConsumers(t *testing.T) {
	q, conn, ids := feedScene(t, 1000)
	// A window of 64 with every other message kept: the kept ones fill
	// half a consumer's prefetch every 64 messages, so the feed needs
	// many consumers to read past what one could hold.
	f, err := OpenFeed(conn, q, Options{}, len(ids), 64)
	if err != nil {
		t.Fatal(err)
	}
	drainKeepingOdd(t, f, ids)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.consumed < 10 {
		t.Errorf("%d consumers read 500 kept messages through a window of 64; want a fresh one each half window", f.consumed)
	}
	oddOnesBack(t, conn, q, ids)
}

// A walk that keeps every other message (a filter that matches half)
// spreads what it keeps over channels: the broker finds an acked
// delivery by passing every one held before it on its channel, so with
// all 1 500 on one channel, 1 500 acks each passed hundreds. A channel
// holds those kept once it had its share, and those its consumer had
// been sent before it was stopped: at most a prefetch, which is 1 024
// here, so that the spread does not hang on how far ahead of the feed
// the broker ran (with the default 8 192, a fast broker sends all 3 000
// to the first consumer). What is kept goes back in order, and every
// tag handed out acks on its own channel.
func TestAFeedSpreadsWhatItKeepsOverChannels(t *testing.T) {
	const n, window = 3000, 1024
	q, conn, ids := feedScene(t, n)
	f, err := OpenFeed(conn, q, Options{}, n, window)
	if err != nil {
		t.Fatal(err)
	}
	drainKeepingOdd(t, f, ids)
	most := 0
	for _, c := range f.chans {
		most = max(most, c.received-c.acked)
	}
	if len(f.chans) < 2 || most >= n/2 {
		t.Errorf("%d kept deliveries on %d channels, at most %d on one: want them spread over channels of about %d", n/2, len(f.chans), most, heldPerChannel)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	oddOnesBack(t, conn, q, ids)
}

// Under a user's max-channels limit the feed reads on no more channels
// than it is given (Options.MaxChannels): one past the limit would make
// the broker close the whole connection.
func TestAFeedReadsOnNoMoreChannelsThanItMay(t *testing.T) {
	const n, window = 3000, 1024
	q, conn, ids := feedScene(t, n)
	f, err := OpenFeed(conn, q, Options{MaxChannels: 2}, n, window)
	if err != nil {
		t.Fatal(err)
	}
	drainKeepingOdd(t, f, ids)
	if len(f.chans) != 2 {
		t.Errorf("the feed read on %d channels, want the 2 it may", len(f.chans))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	oddOnesBack(t, conn, q, ids)
}

func TestAFeedTakesNoMoreThanItsLimit(t *testing.T) {
	q, conn, ids := feedScene(t, 100)
	f, err := OpenFeed(conn, q, Options{}, 60, 0)
	if err != nil {
		t.Fatal(err)
	}
	taken := drain(t, f, func(domain.DeadLetter) bool { return false })
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
	if _, err := OpenFeed(conn, domain.QueueInfo{Name: "s", Type: domain.TypeStream}, Options{}, 1, 0); err == nil || !strings.Contains(err.Error(), "stream") {
		t.Errorf("stream: %v, want a refusal naming the stream", err)
	}
	q := domain.QueueInfo{Name: "q", Type: domain.TypeQuorum, DeliveryLimit: 5, BrokerVersion: "3.10.8"}
	if _, err := OpenFeed(conn, q, Options{}, 1, 0); err == nil || !strings.Contains(err.Error(), "delivery limit 5") {
		t.Errorf("quorum with a limit on 3.10: %v, want the guard's refusal", err)
	}
}

// AckAll acks a run continuing the acked tags with one multiple ack, and
// never reaches a kept delivery or one not yet settled: acks arriving out
// of order, around kept messages, leave exactly the kept ones and those
// never acked, in order.
func TestAFeedAcksContiguousRunsWithoutReachingAKeptDelivery(t *testing.T) {
	q, conn, ids := feedScene(t, 40)
	f, err := OpenFeed(conn, q, Options{}, len(ids), 0)
	if err != nil {
		t.Fatal(err)
	}
	var letters []domain.DeadLetter
	for len(letters) < len(ids) {
		page, _, err := f.Next(context.Background(), 100)
		if err != nil {
			t.Fatal(err)
		}
		letters = append(letters, page...)
	}
	tag := func(i int) uint64 { return letters[i].DeliveryTag }
	kept := map[int]bool{10: true, 25: true}
	f.Keep(len(kept))
	steps := [][]int{
		{0, 1, 2, 3},     // a run from the first tag: one multiple ack
		{6, 5},           // above a gap: one by one
		{4, 7, 8, 9},     // closes the gap: the run reaches 9
		{11, 12, 13},     // above the kept 10: one by one
		{20, 19, 14, 15}, // some above a gap
		{30, 31, 32, 33, 34, 35, 36, 37, 38},
	}
	for _, step := range steps {
		tags := make([]uint64, len(step))
		for i, n := range step {
			tags[i] = tag(n)
		}
		if err := f.AckAll(tags); err != nil {
			t.Fatalf("ack %v: %v", step, err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("the channel did not survive the acks: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	acked := map[int]bool{}
	for _, step := range steps {
		for _, n := range step {
			acked[n] = true
		}
	}
	var want []string
	for i, id := range ids {
		if !acked[i] {
			want = append(want, id)
		}
	}
	waitReady(t, conn, sceneDLQ, len(want))
	if got := logicalIDs(browseAll(t, conn, q, Options{})); !slices.Equal(got, want) {
		t.Errorf("after the acks the queue holds %v, want %v", got, want)
	}
	if f.runs != 2 {
		t.Errorf("%d multiple acks, want 2 (the first run, and the one closing the gap)", f.runs)
	}
	if len(f.chans) != 1 {
		t.Fatalf("40 messages were read on %d channels, want one", len(f.chans))
	}
	if floor := f.chans[0].floor; floor != tag(10) {
		t.Errorf("the acked run ends below tag %d, want it stopped at the kept delivery's tag %d", floor, tag(10))
	}
}
