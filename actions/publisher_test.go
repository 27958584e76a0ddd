//go:build integration

package actions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/testkit"
)

// publishAll publishes msgs through a fresh publisher and returns the
// settlements by Ref, reading Results concurrently as callers must.
func publishAll(t *testing.T, conn *amqp.Connection, window int, msgs []Outgoing) (map[int]Settlement, *Publisher) {
	t.Helper()
	ctx := testCtx(t)
	p, err := NewPublisher(conn, window)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[int]Settlement)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for s := range p.Results() {
			got[s.Ref] = s
		}
	}()
	for _, m := range msgs {
		if err := p.Publish(ctx, m); err != nil {
			break
		}
	}
	if err := p.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	<-collected
	if err := p.Lost(); err != nil {
		t.Fatalf("a publisher closed by its caller reports a loss: %v", err)
	}
	return got, p
}

func outgoing(n int, exchange, key string) []Outgoing {
	out := make([]Outgoing, n)
	for i := range out {
		out[i] = Outgoing{Ref: i, Exchange: exchange, RoutingKey: key, Msg: amqp.Publishing{
			MessageId: msgID(i), DeliveryMode: amqp.Persistent, Body: []byte(msgID(i)),
		}}
	}
	return out
}

func countOutcomes(got map[int]Settlement) map[Outcome]int {
	c := make(map[Outcome]int)
	for _, s := range got {
		c[s.Outcome]++
	}
	return c
}

func TestPublisherSettlesEveryMessageWithTheBrokersAnswer(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "target", nil)
	testkit.Declare(t, ch, "bounded", amqp.Table{"x-max-length": int32(5), "x-overflow": "reject-publish"})

	tests := []struct {
		name  string
		key   string
		n     int
		want  map[Outcome]int
		depth int
	}{
		{"routed messages are confirmed", "target", 500, map[Outcome]int{Confirmed: 500}, 500},
		{"unroutable messages are returned though an ack follows", "no-such-queue", 50, map[Outcome]int{Returned: 50}, -1},
		{"messages refused by reject-publish are nacked", "bounded", 20, map[Outcome]int{Confirmed: 5, Nacked: 15}, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := publishAll(t, conn, 16, outgoing(tc.n, "", tc.key))
			if len(got) != tc.n {
				t.Fatalf("%d settlements, want %d", len(got), tc.n)
			}
			if c := countOutcomes(got); !maps.Equal(c, tc.want) {
				t.Fatalf("outcomes %v, want %v", c, tc.want)
			}
			for _, s := range got {
				if s.Outcome == Returned && (s.ReplyCode != amqp.NoRoute || s.ReplyText == "") {
					t.Errorf("returned message %d: reply %d %q, want NO_ROUTE", s.Ref, s.ReplyCode, s.ReplyText)
				}
			}
			if tc.depth >= 0 {
				testkit.WaitDepth(t, ch, tc.key, tc.depth)
			}
		})
	}
}

func TestPublisherTellsReturnedFromConfirmedAmongIdenticalMessages(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "target", nil)
	if err := ch.ExchangeDeclare("fan", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind("target", "bound", "fan", false, nil); err != nil {
		t.Fatal(err)
	}
	// Same body and properties; only the routing key decides, alternately.
	msgs := make([]Outgoing, 400)
	for i := range msgs {
		key := "bound"
		if i%2 == 1 {
			key = "unbound"
		}
		msgs[i] = Outgoing{Ref: i, Exchange: "fan", RoutingKey: key, Msg: amqp.Publishing{MessageId: "same", Body: []byte("same")}}
	}
	got, _ := publishAll(t, conn, 32, msgs)
	for i := range msgs {
		want := Confirmed
		if i%2 == 1 {
			want = Returned
		}
		if got[i].Outcome != want {
			t.Fatalf("message %d: %s, want %s", i, got[i].Outcome, want)
		}
	}
	testkit.WaitDepth(t, ch, "target", 200)
}

func TestPublisherKeepsManyConfirmsInFlightButNeverMoreThanTheWindow(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "target", nil)
	const window = 64
	got, p := publishAll(t, conn, window, outgoing(3000, "", "target"))
	if c := countOutcomes(got); c[Confirmed] != 3000 {
		t.Fatalf("outcomes %v, want 3000 confirmed", c)
	}
	if peak := p.Peak(); peak <= 1 || peak > window {
		t.Fatalf("peak in flight %d, want pipelining within 2..%d", peak, window)
	}
	testkit.WaitDepth(t, ch, "target", 3000)
}

func TestPublisherSettlesInFlightAsUnknownWhenTheChannelDies(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ctx := testCtx(t)
	p, err := NewPublisher(conn, 8)
	if err != nil {
		t.Fatal(err)
	}
	// Publishing to a missing exchange makes the broker close the channel
	// before it can confirm anything.
	if err := p.Publish(ctx, Outgoing{Ref: 7, Exchange: "missing", RoutingKey: "x", Msg: amqp.Publishing{Body: []byte("b")}}); err != nil {
		t.Fatalf("first publish: %v", err)
	}
	var got []Settlement
	for s := range p.Results() {
		got = append(got, s)
	}
	if len(got) != 1 || got[0].Ref != 7 || got[0].Outcome != Unknown || got[0].Err == nil {
		t.Fatalf("settlements %+v, want one unknown for ref 7 with a reason", got)
	}
	err = p.Publish(ctx, Outgoing{Ref: 8, RoutingKey: "x"})
	if !errors.Is(err, ErrPublisherClosed) {
		t.Fatalf("publish after the channel died: %v, want ErrPublisherClosed", err)
	}
	var ae *amqp.Error
	if lost := p.Lost(); !errors.As(lost, &ae) || ae.Code != amqp.NotFound {
		t.Fatalf("Lost() = %v, want the broker's 404 that closed the channel", lost)
	}
}

func TestPublisherPublishStopsWhenContextIsDone(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	p, err := NewPublisher(conn, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Publish(ctx, Outgoing{RoutingKey: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("publish with a done context: %v, want context.Canceled", err)
	}
}

// An exact message carries no sequence header: its return is matched by
// its message ID and body's digest, the caller's when it gives one.
func TestPublisherMatchesTheReturnOfAnExactMessageByItsIDAndBody(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "target", nil)
	msgs := make([]Outgoing, 400)
	for i := range msgs {
		key := "target"
		if i%3 == 1 {
			key = "no-such-queue"
		}
		body := []byte(fmt.Sprint("body-", i%5)) // bodies and IDs repeat, not both
		msgs[i] = Outgoing{Ref: i, RoutingKey: key, Exact: true, Msg: amqp.Publishing{MessageId: fmt.Sprint("m-", i%7), Body: body}}
		if i%2 == 0 {
			msgs[i].BodyDigest = audit.BodyDigest(body)
		}
	}
	got, _ := publishAll(t, conn, 32, msgs)
	routed := 0
	for i := range msgs {
		want := Confirmed
		if i%3 == 1 {
			want = Returned
		} else {
			routed++
		}
		if got[i].Outcome != want {
			t.Fatalf("message %d (digest given: %t): %s, want %s", i, msgs[i].BodyDigest != "", got[i].Outcome, want)
		}
	}
	testkit.WaitDepth(t, ch, "target", routed)
}

// An imported message may carry the sequence header of a replay warren
// made before it died again and was exported: that header names another
// publish of this channel, or none. Its return is still matched by its
// ID and body, and every routed message is confirmed.
func TestPublisherTrustsNoSequenceHeaderAnExactMessageBrings(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "target", nil)
	msgs := make([]Outgoing, 300)
	for i := range msgs {
		key := "target"
		if i%3 == 1 {
			key = "no-such-queue"
		}
		// The stale header names the publish before this one (a routed
		// message for two in three), or one this channel never made.
		stale := int64(i)
		if i%4 == 0 {
			stale = 1_000_000 + int64(i)
		}
		msgs[i] = Outgoing{Ref: i, RoutingKey: key, Exact: true, Msg: amqp.Publishing{MessageId: fmt.Sprint("m-", i),
			Body: []byte(fmt.Sprint("body-", i)), Headers: amqp.Table{SeqHeader: stale}}}
	}
	got, _ := publishAll(t, conn, 32, msgs)
	routed := 0
	for i := range msgs {
		want := Confirmed
		if i%3 == 1 {
			want = Returned
		} else {
			routed++
		}
		if got[i].Outcome != want {
			t.Fatalf("message %d (stale sequence header %v): %s, want %s", i, msgs[i].Msg.Headers[SeqHeader], got[i].Outcome, want)
		}
	}
	testkit.WaitDepth(t, ch, "target", routed)
}
