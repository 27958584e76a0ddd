//go:build integration

package mgmt

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// heldConfirms publishes into queue on a confirm-mode channel of a
// connection named name, never letting fewer than window publishes wait
// for their confirm, until stop is called; stop then waits for every
// confirm. A quorum queue confirms only after its log is written, so the
// broker always holds some of the window unconfirmed while it runs.
//
// A queue at its limit under overflow=reject-publish does not hold
// confirms: the broker nacks at once (tried on 3.10 and 4.3), and a nack
// is an answer, not an unconfirmed publish. Memory or disk alarms would
// hold them but change the whole broker, which a test must not do.
func heldConfirms(t *testing.T, vhost, name, queue string, window int) (ch *amqp.Channel, stop func()) {
	t.Helper()
	conn, err := amqp.DialConfig(testAMQP+url.PathEscape(vhost), amqp.Config{Properties: amqp.Table{"connection_name": name}})
	if err != nil {
		t.Fatalf("RabbitMQ at %s unreachable: %v", testAMQP, err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err = conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var (
		wg     sync.WaitGroup
		pubErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var inFlight []*amqp.DeferredConfirmation
		defer func() {
			for _, dc := range inFlight {
				dc.Wait()
			}
		}()
		body := make([]byte, 64)
		for {
			select {
			case <-done:
				return
			default:
			}
			if len(inFlight) >= window {
				inFlight[0].Wait()
				inFlight = inFlight[1:]
			}
			dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false, amqp.Publishing{Body: body})
			if err != nil {
				pubErr = err
				return
			}
			inFlight = append(inFlight, dc)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() { close(done); wg.Wait() })
		if pubErr != nil {
			t.Fatalf("publishing: %v", pubErr)
		}
	}
	t.Cleanup(stop)
	return ch, stop
}

// channelsOf is the connection's channels as Channels lists them.
func channelsOf(t *testing.T, c *Client, vhost, conn string) []domain.ChannelStat {
	t.Helper()
	l, err := c.Channels(context.Background(), vhost)
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.ChannelStat
	for _, ch := range l.Channels {
		if ch.Connection == conn {
			out = append(out, ch)
		}
	}
	return out
}

// rawUnconfirmed is the broker's own messages_unconfirmed for a channel.
func rawUnconfirmed(t *testing.T, name string) int64 {
	t.Helper()
	var r struct {
		Unconfirmed int64 `json:"messages_unconfirmed"`
	}
	if err := json.Unmarshal(testkit.Mgmt(t, "GET", "/api/channels/"+url.PathEscape(name)+"?columns=messages_unconfirmed", nil), &r); err != nil {
		t.Fatal(err)
	}
	return r.Unconfirmed
}

func TestChannelsShowAPublisherWaitingForConfirms(t *testing.T) {
	e := newEnv(t)
	e.queue("held", amqp.Table{"x-queue-type": "quorum", "x-max-length": int32(2000), "x-overflow": "drop-head"})
	conn := "warren-test-confirms-" + e.vhost
	_, stop := heldConfirms(t, e.vhost, conn, "held", 256)
	// A channel of the same connection that only consumes: no confirm mode.
	other, err := e.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	// The broker's figures change once per statistics interval (5 s by
	// default), and a new channel's first ones may predate confirm.select.
	var pub domain.ChannelStat
	waitFor(t, 30*time.Second, func() (bool, string) {
		chs := channelsOf(t, e.c, e.vhost, conn)
		for _, ch := range chs {
			if ch.Confirm != nil && *ch.Confirm && ch.Unconfirmed != nil && *ch.Unconfirmed > 0 {
				pub = ch
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", chs)
	})
	if pub.User != "guest" || pub.Vhost != e.vhost || pub.Pending() != *pub.Unconfirmed || *pub.Unconfirmed > 256 {
		t.Errorf("publisher %+v: want guest on %s with at most the window (256) unconfirmed", pub, e.vhost)
	}
	// Between two readings of the broker's own figure that agree, the
	// list gives that figure.
	waitFor(t, 30*time.Second, func() (bool, string) {
		before := rawUnconfirmed(t, pub.Name)
		chs := channelsOf(t, e.c, e.vhost, conn)
		after := rawUnconfirmed(t, pub.Name)
		if before != after || len(chs) == 0 {
			return false, "the broker's figure moved while reading"
		}
		for _, ch := range chs {
			if ch.Name == pub.Name {
				return ch.Unconfirmed != nil && *ch.Unconfirmed == before, fmt.Sprintf("list %v, broker %d", ch.Unconfirmed, before)
			}
		}
		return false, "publisher gone"
	})
	l, err := e.c.Channels(context.Background(), e.vhost)
	if err != nil {
		t.Fatal(err)
	}
	// The publisher waiting for confirms comes before every channel of a
	// smaller backlog (by its order of magnitude: domain.SortChannels).
	at := slices.IndexFunc(l.Channels, func(ch domain.ChannelStat) bool { return ch.Name == pub.Name })
	if at < 0 {
		t.Fatalf("the publisher is not listed: %+v", l.Channels)
	}
	mine := l.Channels[at].Pending()
	for _, ch := range l.Channels[:at] {
		if len(fmt.Sprint(ch.Pending())) < len(fmt.Sprint(mine)) {
			t.Errorf("%s (%d unconfirmed) is listed before the publisher (%d): %+v", ch.Name, ch.Pending(), mine, l.Channels)
		}
	}
	if n, _ := l.Confirms(); n < mine {
		t.Errorf("Confirms() = %d, less than the publisher's own %d", n, mine)
	}

	// Once every confirm is in, the broker reports none pending.
	stop()
	waitFor(t, 30*time.Second, func() (bool, string) {
		for _, ch := range channelsOf(t, e.c, e.vhost, conn) {
			if ch.Name == pub.Name {
				return ch.Unconfirmed != nil && *ch.Unconfirmed == 0 && ch.PublishRate != nil, fmt.Sprintf("%+v", ch)
			}
		}
		return false, "publisher gone"
	})
}

// The queue screen names publishers only where the broker links them to
// exchanges (rates_mode=detailed); otherwise it says it cannot.
func TestQueueDetailSaysWhetherPublishersAreKnown(t *testing.T) {
	e := newEnv(t)
	e.exchange("orders-x", "direct")
	e.queue("orders", nil)
	e.bind("orders", "order.created", "orders-x")
	conn := "warren-test-publisher-" + e.vhost
	_, stop := heldConfirms(t, e.vhost, conn, "orders", 8)
	defer stop()
	ov, err := e.c.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ov.RatesMode == "" {
		t.Fatalf("overview gives no rates_mode: %+v", ov)
	}
	if ov.RatesMode != "detailed" {
		d, err := e.c.Queue(context.Background(), e.vhost, "orders")
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Publishers) != 0 || d.PublishersNote != domain.NoPublisherLinks {
			t.Errorf("rates_mode %s: publishers %+v, note %q", ov.RatesMode, d.Publishers, d.PublishersNote)
		}
		return
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		d, err := e.c.Queue(context.Background(), e.vhost, "orders")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Publishers {
			if p.Connection == conn && p.Exchange == "" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v %q", d.Publishers, d.PublishersNote)
	})
}
