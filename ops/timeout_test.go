//go:build integration

package ops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/testkit"
)

// heldScene is a DLQ of n messages declared with args, on a vhost of its
// own.
func heldScene(t *testing.T, args amqp.Table, n int) (string, *amqp.Channel) {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-ops-timeout")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "held.dlq", args)
	for i := range n {
		if err := ch.Publish("", "held.dlq", false, false, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte("b")}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, ch, "held.dlq", n)
	return vhost, ch
}

// ready is how many of the queue's messages are ready (not held).
func ready(t *testing.T, ch *amqp.Channel, name string) int {
	t.Helper()
	q, err := ch.QueueDeclarePassive(name, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return q.Messages
}

func TestAHeldSessionGivesItsMessagesBackBeforeTheConsumerTimeout(t *testing.T) {
	vhost, ch := heldScene(t, nil, 5)
	// The broker's consumer_timeout, as the context says it (rabbitmq.conf
	// would set it); the session must not wait for the broker to act.
	l := newOps(t, &config.Context{Name: "test", Username: "guest", ConsumerTimeout: config.Duration{Duration: 5 * time.Second}})
	ctx := testCtx(t)
	s, err := l.Open(ctx, domain.QueueRef{Vhost: vhost, Name: "held.dlq"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The countdown starts at the first delivery, somewhere in Next.
	before := time.Now()
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if got := ready(t, ch, "held.dlq"); got != 0 {
		t.Fatalf("%d ready while the session holds the page, want 0", got)
	}
	at, why := s.Deadline()
	if at.IsZero() || at.Before(before.Add(4*time.Second)) || at.After(after.Add(4*time.Second)) || !strings.Contains(why, "consumer_timeout") {
		t.Fatalf("deadline %s (%s after asking for the first page), %q; want a fifth before the 5 s timeout, naming the broker's consumer_timeout", at, at.Sub(before), why)
	}
	select {
	case err := <-s.Done():
		var te *dlq.TimeoutError
		if !errors.As(err, &te) || te.Held != 5 {
			t.Fatalf("session ended with %v, want a *dlq.TimeoutError for the 5 held", err)
		}
		// The broker would act a second (the margin) after the deadline.
		if left := time.Until(at.Add(time.Second)); left <= 0 {
			t.Errorf("the session gave its messages back %s after the timeout, want before it", -left)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session still holds its messages 10 s after a 5 s consumer timeout")
	}
	testkit.WaitDepth(t, ch, "held.dlq", 5)
	if got := ready(t, ch, "held.dlq"); got != 5 {
		t.Errorf("%d ready after the session gave them back, want 5", got)
	}
}

// A quorum queue with a consumer timeout of its own (x-consumer-timeout,
// 3 s): RabbitMQ 4.3 takes it, and takes a consumer's own over it, so a
// browse asks for an hour; 3.10 knows neither (3.12 brought the queue's),
// so warren takes the broker's and asks nothing. Either way the session
// holds its messages past the queue's 3 s.
func TestAHeldSessionOnAQueueWithAConsumerTimeoutOfItsOwn(t *testing.T) {
	args := amqp.Table{"x-queue-type": "quorum", "x-consumer-timeout": int32(3000)}
	ctx := testCtx(t)
	if !testkit.AtLeast(t, 4, 3) {
		vhost, ch := heldScene(t, args, 3)
		l := newOps(t, &config.Context{Name: "test", Username: "guest", ConsumerTimeout: config.Duration{Duration: config.DefaultConsumerTimeout}})
		target, err := l.Resolve(ctx, domain.QueueRef{Vhost: vhost, Name: "held.dlq"})
		if err != nil {
			t.Fatal(err)
		}
		if o := target.Opts; o.AskTimeout != 0 || o.ConsumerTimeout != config.DefaultConsumerTimeout || !strings.Contains(o.TimeoutWhy, "consumer_timeout") {
			t.Fatalf("resolved %s (%q), ask %s; want the broker's 30m and no ask, since this broker ignores the queue's", o.ConsumerTimeout, o.TimeoutWhy, o.AskTimeout)
		}
		s, err := l.Open(ctx, domain.QueueRef{Vhost: vhost, Name: "held.dlq"}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-s.Done():
			t.Fatalf("the session ended past the queue's 3 s on a broker that ignores it: %v", err)
		case <-time.After(6 * time.Second):
		}
		if got := len(s.Letters()); got != 3 {
			t.Errorf("the session holds %d after 6 s, want 3", got)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		testkit.WaitDepth(t, ch, "held.dlq", 3)
		return
	}

	// Without asking, the broker takes the held messages after 3 s and
	// ends the session: what warren did before.
	vhost, ch := heldScene(t, args, 3)
	l := newOps(t, &config.Context{Name: "test", Username: "guest"})
	target, err := l.Resolve(ctx, domain.QueueRef{Vhost: vhost, Name: "held.dlq"})
	if err != nil {
		t.Fatal(err)
	}
	if target.Opts.AskTimeout != browseAsk || target.Opts.ConsumerTimeout != 3*time.Second || !strings.Contains(target.Opts.TimeoutWhy, "x-consumer-timeout") {
		t.Fatalf("resolved %s (%q), ask %s; want the queue's 3 s and an ask of %s", target.Opts.ConsumerTimeout, target.Opts.TimeoutWhy, target.Opts.AskTimeout, browseAsk)
	}
	unasked := *target
	unasked.Opts.AskTimeout, unasked.Opts.ConsumerTimeout = 0, 0
	b, err := l.Browse(ctx, &unasked)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("control: the broker did not end a session past the queue's 3 s consumer timeout")
	}
	_ = b.Close()
	testkit.WaitDepth(t, ch, "held.dlq", 3)

	// Asking, the session holds its messages past the queue's timeout.
	s, err := l.Open(ctx, domain.QueueRef{Vhost: vhost, Name: "held.dlq"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	at, why := s.Deadline()
	if time.Until(at) < 40*time.Minute || !strings.Contains(why, "asked") {
		t.Errorf("deadline in %s (%q), want about an hour, asked of the broker", time.Until(at).Round(time.Second), why)
	}
	select {
	case err := <-s.Done():
		t.Fatalf("the session ended past the queue's 3 s timeout although it asked for longer: %v", err)
	case <-time.After(8 * time.Second):
	}
	if got := len(s.Letters()); got != 3 {
		t.Errorf("the session holds %d after 8 s, want 3", got)
	}
	if got := ready(t, ch, "held.dlq"); got != 0 {
		t.Errorf("%d ready while the session holds them, want 0", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, ch, "held.dlq", 3)
}
