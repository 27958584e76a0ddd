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

func classicDLQ(vhost string) domain.QueueInfo {
	return domain.QueueInfo{Vhost: vhost, Name: sceneDLQ, Type: domain.TypeClassic, DeliveryLimit: -1, BrokerVersion: "3.10.8"}
}

func TestBrowseShowsWhyEachMessageDied(t *testing.T) {
	vhost, conn := testVhost(t)
	buildScene(t, conn)
	o := Options{LogicalID: "header:event_id", OriginDeliveryLimits: map[string]int64{sceneBilling: 2}}
	got := browseAll(t, conn, classicDLQ(vhost), o)

	want := []struct {
		id             string
		from           domain.IDSource
		reason, origin string
		exchange       string
		attempts       int
	}{
		{"E-retry", domain.IDHeader, domain.ReasonRejected, sceneOrders, "work", 3},
		{"E-ttl", domain.IDHeader, domain.ReasonExpired, sceneTTL, "", 1},
		{"mid-max1", domain.IDMessageID, domain.ReasonMaxLen, sceneCapped, "", 1},
		{HashID([]byte("two")), domain.IDHash, domain.ReasonMaxLen, sceneCapped, "", 1},
		{"E-limit", domain.IDHeader, domain.ReasonDeliveryLimit, sceneBilling, "", 3},
	}
	if len(got) != len(want) {
		t.Fatalf("browsed %d messages (%v), want %d", len(got), logicalIDs(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.LogicalID != w.id || g.LogicalIDFrom != w.from || g.Reason != w.reason || g.OriginQueue != w.origin ||
			g.OriginExchange != w.exchange || g.Attempts != w.attempts {
			t.Errorf("message %d: got id %q (%s) reason %q origin %q exchange %q attempts %d; want %+v",
				i, g.LogicalID, g.LogicalIDFrom, g.Reason, g.OriginQueue, g.OriginExchange, g.Attempts, w)
		}
		if g.Position != i || g.DeliveryTag == 0 || g.DeadLetteredAt.IsZero() || g.Body == nil {
			t.Errorf("message %d: position %d tag %d time %v body %q", i, g.Position, g.DeliveryTag, g.DeadLetteredAt, g.Body)
		}
	}
	if rk := got[0].RoutingKeys; len(rk) == 0 {
		t.Errorf("retry-path message has no routing keys")
	}
}

func TestBrowsingAClassicDLQKeepsItsDepthAndOrder(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "src", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
	testkit.Declare(t, ch, sceneDLQ, nil)
	var want []string
	for i := range 23 {
		id := fmtID(i)
		want = append(want, id)
		publish(t, ch, "", "src", amqp.Publishing{MessageId: id, Body: []byte(id)})
	}
	waitReady(t, conn, sceneDLQ, len(want))
	q := classicDLQ(vhost)

	ctx := context.Background()
	s, err := Open(ctx, conn, q, Options{Window: 5})
	if err != nil {
		t.Fatal(err)
	}
	var pages []int
	var seen []domain.DeadLetter
	for {
		p, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(p.Letters))
		seen = append(seen, p.Letters...)
		if p.End {
			break
		}
		waitReady(t, conn, sceneDLQ, len(want)-len(seen))
	}
	if !slices.Equal(pages, []int{5, 5, 5, 5, 3}) {
		t.Errorf("page sizes %v, want windows of 5", pages)
	}
	if got := logicalIDs(seen); !slices.Equal(got, want) {
		t.Errorf("browse order %v, want %v", got, want)
	}
	if n := len(s.Letters()); n != len(want) {
		t.Errorf("session holds %d letters, want %d", n, len(want))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, conn, sceneDLQ, len(want))

	after := browseAll(t, conn, q, Options{})
	if got := logicalIDs(after); !slices.Equal(got, want) {
		t.Errorf("after browsing, order %v, want %v", got, want)
	}
	if !after[0].Redelivered {
		t.Errorf("a returned message is not marked redelivered")
	}
	waitReady(t, conn, sceneDLQ, len(want))
}

func TestSessionAcksAndReturnsSingleDeliveries(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, sceneDLQ, nil)
	for i := range 4 {
		publish(t, ch, "", sceneDLQ, amqp.Publishing{MessageId: fmtID(i)})
	}
	waitReady(t, conn, sceneDLQ, 4)
	ctx := context.Background()
	s, err := Open(ctx, conn, classicDLQ(vhost), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Next(ctx)
	if err != nil || len(p.Letters) != 4 || !p.End {
		t.Fatalf("page %+v, %v", p, err)
	}
	if err := s.Ack(p.Letters[1].DeliveryTag); err != nil {
		t.Fatal(err)
	}
	if err := s.Return(p.Letters[2].DeliveryTag); err != nil {
		t.Fatal(err)
	}
	waitReady(t, conn, sceneDLQ, 1)
	if err := s.Ack(p.Letters[1].DeliveryTag); err == nil || !strings.Contains(err.Error(), "not held") {
		t.Errorf("acking twice: %v, want a refusal (a double ack would kill the channel)", err)
	}
	if got := logicalIDs(s.Letters()); !slices.Equal(got, []string{fmtID(0), fmtID(3)}) {
		t.Errorf("still held %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-s.Done(); ok {
		t.Errorf("Done delivered an error after a clean close")
	}
	if err := s.Ack(p.Letters[0].DeliveryTag); !errors.Is(err, ErrClosed) {
		t.Errorf("ack after close: %v", err)
	}
	if _, err := s.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("next after close: %v", err)
	}
	waitReady(t, conn, sceneDLQ, 3)
	if got := logicalIDs(browseAll(t, conn, classicDLQ(vhost), Options{})); !slices.Equal(got, []string{fmtID(0), fmtID(2), fmtID(3)}) {
		t.Errorf("after ack of one message, the DLQ holds %v", got)
	}
}

func TestSessionWarnsWhenTheDLQHasConsumers(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, sceneDLQ, nil)
	stop := consumeWith(t, conn, sceneDLQ, func(d amqp.Delivery) { _ = d.Nack(false, true) })
	defer stop()
	s, err := Open(context.Background(), conn, classicDLQ(vhost), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Next(context.Background())
	if err != nil || !p.End || !strings.Contains(strings.Join(p.Notes, "\n"), "DLQ has 1 consumer: it cannot see") {
		t.Errorf("page %+v, %v: want the consumer warning", p, err)
	}
}

func TestLosingTheSessionReachesDoneAndGivesMessagesBack(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, sceneDLQ, nil)
	publish(t, ch, "", sceneDLQ, amqp.Publishing{MessageId: "only"})
	waitReady(t, conn, sceneDLQ, 1)

	name := "warren-dlq-test-" + randomHex()
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(name)
	other, err := amqp.DialConfig(testkit.AMQPURL+vhost, amqp.Config{Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, err := Open(context.Background(), other, classicDLQ(vhost), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p, err := s.Next(context.Background()); err != nil || len(p.Letters) != 1 {
		t.Fatalf("page %+v, %v", p, err)
	}
	waitReady(t, conn, sceneDLQ, 0)
	closeConnection(t, name)
	select {
	case err := <-s.Done():
		if err == nil || !strings.Contains(err.Error(), "reopen") {
			t.Errorf("Done gave %v, want the loss explained", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not report the lost channel")
	}
	if _, err := s.Next(context.Background()); err == nil {
		t.Error("Next on a lost session succeeded")
	}
	if err := s.Ack(1); err == nil {
		t.Error("Ack on a lost session succeeded")
	}
	waitReady(t, conn, sceneDLQ, 1)
}

func TestCloseStopsAWaitingNextAndReturnsWhatItHeld(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, sceneDLQ, nil)
	publish(t, ch, "", sceneDLQ, amqp.Publishing{MessageId: "a"})
	publish(t, ch, "", sceneDLQ, amqp.Publishing{MessageId: "b"})
	waitReady(t, conn, sceneDLQ, 2)
	s, err := Open(context.Background(), conn, classicDLQ(vhost), Options{Idle: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// Another consumer takes one of the two, so the page waits for a
	// second message that will not come.
	other := testkit.Channel(t, conn)
	if err := other.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	taken, err := other.Consume(sceneDLQ, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-taken
	next := make(chan error, 1)
	go func() {
		_, err := s.Next(context.Background())
		next <- err
	}()
	waitReady(t, conn, sceneDLQ, 0)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-next; !errors.Is(err, ErrClosed) || time.Since(start) > 5*time.Second {
		t.Errorf("Next after Close: %v after %s", err, time.Since(start))
	}
	waitReady(t, conn, sceneDLQ, 1)
	other.Close()
	waitReady(t, conn, sceneDLQ, 2)
}

// Dead letters that arrive after a browse reached the end of what the
// queue held when it opened are read by the next page, not hidden
// behind "end of queue"; with none, the next page is the end again.
func TestANextPageAfterTheEndReadsWhatArrivedSince(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "src", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
	testkit.Declare(t, ch, sceneDLQ, nil)
	for i := range 2 {
		publish(t, ch, "", "src", amqp.Publishing{MessageId: fmtID(i), Body: []byte("b")})
	}
	waitReady(t, conn, sceneDLQ, 2)
	ctx := context.Background()
	s, err := Open(ctx, conn, classicDLQ(vhost), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	p, err := s.Next(ctx)
	if err != nil || !p.End || len(p.Letters) != 2 {
		t.Fatalf("first page: %d letters, end %v (%v); want the 2 and the end", len(p.Letters), p.End, err)
	}
	for i := 2; i < 5; i++ {
		publish(t, ch, "", "src", amqp.Publishing{MessageId: fmtID(i), Body: []byte("b")})
	}
	waitReady(t, conn, sceneDLQ, 3)
	p, err = s.Next(ctx)
	if err != nil || len(p.Letters) != 3 || !p.End {
		t.Fatalf("after 3 arrived: %d letters, end %v (%v); want the 3 and the end", len(p.Letters), p.End, err)
	}
	if got := logicalIDs(p.Letters); !slices.Equal(got, []string{fmtID(2), fmtID(3), fmtID(4)}) || !strings.Contains(strings.Join(p.Notes, " "), "read 3 more that arrived") {
		t.Errorf("the page of arrivals holds %v with notes %q", got, p.Notes)
	}
	p, err = s.Next(ctx)
	if err != nil || len(p.Letters) != 0 || !p.End {
		t.Fatalf("with nothing new: %d letters, end %v (%v); want none and the end", len(p.Letters), p.End, err)
	}
	if n := len(s.Letters()); n != 5 {
		t.Errorf("the session holds %d, want all 5", n)
	}
}
