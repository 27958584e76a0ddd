//go:build integration

package dlq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// budgetScene has the broker dead-letter n messages (msg(i)) into the
// DLQ of a vhost of its own, by expiry.
func budgetScene(t *testing.T, n int, msg func(i int) amqp.Publishing) (string, *amqp.Connection) {
	t.Helper()
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "src", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
	testkit.Declare(t, ch, sceneDLQ, nil)
	for i := range n {
		publish(t, ch, "", "src", msg(i))
	}
	waitReady(t, conn, sceneDLQ, n)
	return vhost, conn
}

// A page asks the broker for no more bodies at once than the byte budget
// allows: one message while none was read, then as many as fit at the
// sizes seen. Every message still arrives, in order, and a listing that
// drops bodies keeps each letter's size and the logical ID read from its
// body.
func TestAPageAsksForNoMoreBytesThanTheBudget(t *testing.T) {
	const n, size = 10, 256 << 10
	var want []string
	for i := range n {
		want = append(want, fmtID(i))
	}
	vhost, conn := budgetScene(t, n, func(i int) amqp.Publishing {
		id := fmtID(i)
		return amqp.Publishing{MessageId: "m-" + id, Body: []byte(fmt.Sprintf(`{"id":%q,"pad":%q}`, id, strings.Repeat("x", size)))}
	})

	ctx := context.Background()
	s, err := Open(ctx, conn, classicDLQ(vhost), Options{LogicalID: "json:id", ByteBudget: 5 * size, KeepBody: func(domain.DeadLetter) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := logicalIDs(p.Letters); !slices.Equal(got, want) || !p.End {
		t.Fatalf("one page of the whole queue read %v (end %v), want %v", got, p.End, want)
	}
	// One message first, then parts of three (5 × 256 KiB over a little
	// more than 256 KiB each, less one for the body being assembled):
	// 1 + 3 + 3 + 3.
	if s.pages != 4 {
		t.Errorf("the page was read in %d parts, want 4: the budget was not kept", s.pages)
	}
	for _, l := range p.Letters {
		if l.Body != nil || l.Size < size || l.LogicalIDFrom != "json" {
			t.Errorf("letter %s: body kept %v, size %d, ID from %s", l.LogicalID, l.Body != nil, l.Size, l.LogicalIDFrom)
		}
	}
}

// A feed (a walk's reader) asks the broker for no more bodies at once
// than the byte budget allows, and still takes every message in order,
// widening its prefetch as the bodies seen get smaller.
func TestAFeedAsksForNoMoreBytesThanTheBudget(t *testing.T) {
	const big, small, size = 8, 40, 256 << 10
	vhost, conn := budgetScene(t, big+small, func(i int) amqp.Publishing {
		pad := "x"
		if i < big {
			pad = strings.Repeat("x", size)
		}
		return amqp.Publishing{MessageId: fmtID(i), Body: []byte(pad)}
	})

	ctx := context.Background()
	f, err := OpenFeed(conn, classicDLQ(vhost), Options{ByteBudget: 4 * size}, big+small, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.window != 1 {
		t.Errorf("first prefetch %d, want one message while no body was seen", f.window)
	}
	// As a walk does, a page is acked only after the next one is read
	// (its copies are published meanwhile): a page may hold the whole
	// prefetch, and the feed must still hand out the next one.
	var got []string
	var waiting []domain.DeadLetter
	peak := 0
	for {
		letters, end, err := f.Next(ctx, 512)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range waiting {
			if err := f.Ack(l.DeliveryTag); err != nil {
				t.Fatal(err)
			}
		}
		waiting = letters
		for _, l := range letters {
			got = append(got, l.MessageID)
		}
		if len(got) <= big {
			peak = max(peak, f.window)
		}
		if end {
			break
		}
	}
	if len(got) != big+small {
		t.Fatalf("fed %d of %d", len(got), big+small)
	}
	for i, id := range got {
		if id != fmtID(i) {
			t.Fatalf("fed out of order at %d: %v", i, got)
		}
	}
	// 4 × 256 KiB over bodies of 256 KiB: three at once.
	if peak > 3 {
		t.Errorf("prefetch reached %d while the bodies were 256 KiB, want at most 3 (the budget over their size)", peak)
	}
	// The mean size falls as the small ones come (8 × 256 KiB over 48
	// messages: about 43 KiB, 23 in the budget; the prefetch moves once it is off by half).
	if f.window < 10 {
		t.Errorf("prefetch %d once the bodies were a byte, want it widened to what the budget allows", f.window)
	}
}

// A page that keeps its bodies (the dashboard's, which replays them)
// ends once they reach the budget; the next page holds the rest, in
// order.
func TestAPageThatKeepsBodiesEndsAtTheBudget(t *testing.T) {
	const n, size = 10, 256 << 10
	var want []string
	for i := range n {
		want = append(want, fmtID(i))
	}
	vhost, conn := budgetScene(t, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: fmtID(i), Body: []byte(strings.Repeat("x", size))}
	})
	ctx := context.Background()
	s, err := Open(ctx, conn, classicDLQ(vhost), Options{ByteBudget: 4 * size})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	pages := 0
	for {
		p, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if kept := keptBytes(p); kept > 4*size+size {
			t.Errorf("page %d keeps %d bytes of bodies, want no more than the budget and the message that reached it", pages, kept)
		}
		for _, l := range p.Letters {
			got = append(got, l.MessageID)
		}
		if p.End || pages > n {
			break
		}
	}
	if !slices.Equal(got, want) || pages < 3 {
		t.Errorf("%d pages held %v, want several pages holding %v in order", pages, got, want)
	}
}

// A session that keeps bodies holds four budgets of them at most: the
// page after says so, and nothing is lost.
func TestASessionHoldsNoMoreBodiesThanFourBudgets(t *testing.T) {
	const n, size = 20, 128 << 10
	vhost, conn := budgetScene(t, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: fmtID(i), Body: []byte(strings.Repeat("x", size))}
	})
	ctx := context.Background()
	s, err := Open(ctx, conn, classicDLQ(vhost), Options{ByteBudget: 2 * size})
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for range n {
		p, err := s.Next(ctx)
		if errors.Is(err, ErrHeldBudget) {
			if !strings.Contains(err.Error(), "act on what is held, or reopen") {
				t.Errorf("the refusal does not say what to do: %v", err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held += len(p.Letters)
		if p.End {
			t.Fatalf("the whole queue (%d) was held: the session kept more than four budgets", held)
		}
	}
	if held < 8 || held > 10 {
		t.Errorf("held %d messages of 128 KiB before the refusal, want four budgets of 256 KiB (8, and the one that reached it)", held)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, conn, sceneDLQ, n)
}
