//go:build integration

package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/ui/overview"
	"github.com/warrenops/warren/ui/queuedetail"
	"github.com/warrenops/warren/ui/styles"
)

// rejectAll takes n deliveries of queue on a channel of its own and
// rejects each, requeued or not.
func rejectAll(t *testing.T, conn *amqp.Connection, queue string, n int, requeue bool) {
	t.Helper()
	ch := testkit.Channel(t, conn)
	if err := ch.Qos(n, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	for range n {
		select {
		case d := <-ds:
			if err := d.Reject(requeue); err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no delivery from %s", queue)
		}
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
}

// publishConfirmed publishes n messages to queue and says how many the
// broker confirmed (a full queue under reject-publish nacks the rest).
func publishConfirmed(t *testing.T, conn *amqp.Connection, queue string, n int) int {
	t.Helper()
	ch := testkit.Channel(t, conn)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	acked := 0
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false,
			amqp.Publishing{MessageId: fmt.Sprintf("%s-%d", queue, i), DeliveryMode: amqp.Persistent, Body: []byte("{}")})
		if err != nil {
			t.Fatalf("publish to %s: %v", queue, err)
		}
		if ok, err := dc.WaitContext(context.Background()); err != nil {
			t.Fatal(err)
		} else if ok {
			acked++
		}
	}
	return acked
}

// selectOnly filters the overview down to queue name, as / does.
func selectOnly(t *testing.T, m *overview.Model, name string) *overview.Model {
	t.Helper()
	scr, _ := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	scr, _ = scr.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name)})
	scr, _ = scr.Update(tea.KeyMsg{Type: tea.KeyEnter})
	return scr.(*overview.Model)
}

// refreshUntil refreshes the overview once a second until ok accepts its
// selected row, failing after 40 s.
func refreshUntil(t *testing.T, m *overview.Model, what string, ok func(q domain.Queue) bool) *overview.Model {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		m = refreshOverview(t, m)
		if q, found := m.Selected(); found && ok(q) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the overview never showed %s; last view:\n%s", what, m.View())
		}
		time.Sleep(time.Second)
	}
}

// tableRow is the overview's row for name, from its TYPE cell on.
func tableRow(t *testing.T, view, name string) []string {
	t.Helper()
	for _, line := range strings.Split(view, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f) && i < 3; i++ {
			if strings.TrimLeft(f[i], ">!~") == name && f[i+1] == "quorum" {
				return f[i+1:]
			}
		}
	}
	t.Fatalf("no row for %s in\n%s", name, view)
	return nil
}

// A quorum queue with a delayed retry whose consumer rejected its
// messages with requeue: on 4.3 they wait out their delay, counted in
// TOTAL and DELAYED but not READY, and the queue reads "delayed", never
// "empty"; the queue screen splits the depth and names the setting. On
// 3.10 the broker reports no such figure: no DELAYED column.
func TestDelayedRetryMessagesAreShownApartFromReadyOnTheRealBroker(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	vhost := testkit.Vhost(t, "warren-delayed")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	// A delay far longer than the test: the messages stay delayed.
	testkit.Declare(t, ch, "delayed-retry", amqp.Table{"x-queue-type": "quorum",
		"x-delayed-retry-type": "all", "x-delayed-retry-min": int64(120000), "x-delayed-retry-max": int64(120000)})
	if got := publishConfirmed(t, conn, "delayed-retry", 3); got != 3 {
		t.Fatalf("%d of 3 publishes confirmed", got)
	}
	rejectAll(t, conn, "delayed-retry", 3, true)
	is43 := testkit.AtLeast(t, 4, 3)

	client, err := mgmt.New(mgmt.Options{URL: testkit.MgmtURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	m := overview.New(overview.Options{Lister: client, Styles: styles.New(true), Vhost: vhost, Refresh: time.Hour})
	m.SetSize(200, 20)
	m = selectOnly(t, m, "delayed-retry")
	m = refreshUntil(t, m, "the delayed messages", func(q domain.Queue) bool {
		if !is43 {
			return q.HasRates && q.Messages == 3
		}
		// The publish rate of the three publishes takes a few samples to
		// fall to 0; until then the queue reads as growing.
		return q.Delayed != nil && *q.Delayed == 3 && q.Ready == 0 && q.Drain().Movement == domain.Delayed
	})
	view := m.View()
	// TYPE READY [DELAYED] UNACK TOTAL OLDEST CONS PUB/s ACK/s DRAIN
	row := tableRow(t, view, "delayed-retry")
	if !is43 {
		if strings.Contains(view, "DELAYED") {
			t.Fatalf("RabbitMQ %s reports no delayed messages, yet:\n%s", testkit.Version(t), view)
		}
		return
	}
	if got := strings.Join(row[1:5], " "); got != "0 3 0 3" || row[9] != "delayed" || !strings.Contains(view, "READY DELAYED") {
		t.Fatalf("READY DELAYED UNACK TOTAL %q, DRAIN %q, want 0 3 0 3 and delayed:\n%s", got, row[9], view)
	}
	if !strings.Contains(view, "3 delayed (delayed retry all (min: 120000ms, max: 120000ms))") {
		t.Fatalf("the note does not say what waits:\n%s", view)
	}

	// The broker's publish rate of the three publishes takes a few
	// samples to fall to 0; until then the queue reads as growing.
	wants := []string{"depth 3 (ready 0, delayed 3, unacked 0)", "delayed retry all (min: 120000ms, max: 120000ms) · 3 waiting out their delay",
		"delayed-retry-type       all", "not ready yet: every message waits out its delayed retry"}
	var screen string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		qs := queuedetail.New(queuedetail.Options{Queue: domain.QueueRef{Vhost: vhost, Name: "delayed-retry"}, Describer: client,
			Styles: styles.New(true), Refresh: time.Hour})
		qs.SetSize(160, 60)
		scr, _ := qs.Update(qs.Init()())
		screen = scr.View()
		missing := ""
		for _, want := range wants {
			if !strings.Contains(screen, want) {
				missing = want
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue screen lacks %q:\n%s", missing, screen)
		}
	}
}

// An at-least-once quorum queue whose DLQ is full (max-length 1,
// reject-publish): the dead letters it cannot hand over stay in it
// (messages_dlx, which 3.10 reports for such a queue as 4.3 does), the
// overview shows the backlog and, once it grows, marks the queue in
// trouble; the queue screen says why.
func TestAGrowingDLXBacklogPutsTheRealQueueInTrouble(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	vhost := testkit.Vhost(t, "warren-dlxheld")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	if err := ch.ExchangeDeclare("dlx", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, ch, "dlx-full", amqp.Table{"x-queue-type": "quorum", "x-max-length": int64(1), "x-overflow": "reject-publish"})
	if err := ch.QueueBind("dlx-full", "dlx-source", "dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, ch, "dlx-source", amqp.Table{"x-queue-type": "quorum", "x-dead-letter-exchange": "dlx",
		"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"})
	// Fill the DLQ until it refuses a publish.
	for filled := 0; publishConfirmed(t, conn, "dlx-full", 1) == 1; filled++ {
		if filled > 20 {
			t.Fatal("dlx-full never refused a publish")
		}
	}
	if got := publishConfirmed(t, conn, "dlx-source", 3); got != 3 {
		t.Fatalf("%d of 3 publishes confirmed", got)
	}
	rejectAll(t, conn, "dlx-source", 3, false)

	client, err := mgmt.New(mgmt.Options{URL: testkit.MgmtURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	m := overview.New(overview.Options{Lister: client, Styles: styles.New(true), Vhost: vhost, Refresh: time.Hour})
	m.SetSize(250, 20)
	m = selectOnly(t, m, "dlx-source")
	m = refreshUntil(t, m, "a backlog of 3", func(q domain.Queue) bool { return q.DLXHeld != nil && *q.DLXHeld == 3 })
	// A backlog that stays is worth a look, not trouble: an overview
	// opened now sees it steady over two refreshes.
	m = overview.New(overview.Options{Lister: client, Styles: styles.New(true), Vhost: vhost, Refresh: time.Hour})
	m.SetSize(250, 20)
	m = selectOnly(t, m, "dlx-source")
	m = refreshUntil(t, m, "the backlog of 3", func(q domain.Queue) bool { return q.DLXHeld != nil && *q.DLXHeld == 3 })
	time.Sleep(time.Second)
	m = refreshOverview(t, m)
	view := m.View()
	// Only the dead letters held for the DLX are left: DRAIN says so.
	row := strings.Join(tableRow(t, view, "dlx-source"), " ")
	if q, _ := m.Selected(); !strings.Contains(view, "3 dead letters held for the DLX") || rowMarked(t, view, "dlx-source") ||
		!strings.Contains(row, " 0 DLX backlog ") || q.Messages != 3 {
		t.Fatalf("a steady backlog of 3 (depth %d):\n%s", q.Messages, view)
	}
	if got := publishConfirmed(t, conn, "dlx-source", 2); got != 2 {
		t.Fatalf("%d of 2 publishes confirmed", got)
	}
	rejectAll(t, conn, "dlx-source", 2, false)
	m = refreshUntil(t, m, "a backlog of 5", func(q domain.Queue) bool { return q.DLXHeld != nil && *q.DLXHeld == 5 })
	view = m.View()
	if !rowMarked(t, view, "dlx-source") || !strings.Contains(view, "DLX backlog growing (+2 in the last 1m)") || !strings.Contains(view, "1 in trouble") {
		t.Fatalf("a growing DLX backlog is not trouble:\n%s", view)
	}

	qs := queuedetail.New(queuedetail.Options{Queue: domain.QueueRef{Vhost: vhost, Name: "dlx-source"}, Describer: client,
		Styles: styles.New(true), Refresh: time.Hour})
	qs.SetSize(250, 60)
	scr, _ := qs.Update(qs.Init()())
	screen := scr.View()
	for _, want := range []string{"DLX backlog: 5 dead letters held for the DLX", "dlx-backlog",
		"the target dlx-full is full", "nothing to consume: every message is a dead letter held for the DLX"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the queue screen lacks %q:\n%s", want, screen)
		}
	}
}
