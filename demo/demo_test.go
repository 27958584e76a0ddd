//go:build integration

package demo

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
)

// reasonsOf counts deliveries by the reason of their most recent death.
func reasonsOf(ds []amqp.Delivery) map[string]int {
	m := map[string]int{}
	for _, d := range ds {
		deaths, _ := d.Headers["x-death"].([]any)
		if len(deaths) == 0 {
			m["(no x-death)"]++
			continue
		}
		last, _ := deaths[0].(amqp.Table)
		m[fmt.Sprint(last["reason"])]++
	}
	return m
}

func TestSeedLeavesBrokerDeadLettersForEveryReasonAndRerunsToTheSameContent(t *testing.T) {
	o := testOptions(t)
	want := map[string]map[string]int{
		qOrdersDLQ:   {domain.ReasonRejected: 12, domain.ReasonExpired: 4, domain.ReasonMaxLen: 6, domain.ReasonDeliveryLimit: 4},
		qPaymentsDLQ: {domain.ReasonExpired: 7},
		// Framework error queues: no x-death, the exception in headers.
		qShipmentsErr: {reasonException: 6},
		qBillingDLQ:   {reasonException: 5},
	}
	var firstRun map[string]map[string]int
	for run := 1; run <= 2; run++ {
		s := seed(t, o)
		conn := dialVhost(t, o.Vhost)
		seen := map[string]map[string]int{}
		for _, d := range s.DLQs {
			if !maps.Equal(d.Reasons, want[d.Name]) {
				t.Errorf("run %d: scene says %s holds %v, want %v", run, d.Name, d.Reasons, want[d.Name])
			}
			browse(t, conn, d.Name, d.Total(), func(ds []amqp.Delivery) {
				seen[d.Name] = reasonsOf(ds)
				checkDeadLetters(t, d.Name, ds)
			})
			if got := mustDepth(t, conn, d.Name); got != d.Total() {
				t.Errorf("run %d: %s holds %d after browsing, want %d back", run, d.Name, got, d.Total())
			}
		}
		for name, reasons := range want {
			if name == qShipmentsErr || name == qBillingDLQ {
				reasons = map[string]int{"(no x-death)": reasons[reasonException]}
			}
			if !maps.Equal(seen[name], reasons) {
				t.Errorf("run %d: %s reasons from x-death = %v, want %v", run, name, seen[name], reasons)
			}
		}
		if run == 1 {
			firstRun = seen
		} else if !maps.EqualFunc(firstRun, seen, maps.Equal) {
			t.Errorf("second seed changed the DLQs: %v, then %v", firstRun, seen)
		}
	}
}

// checkDeadLetters checks what only the broker could have written: the
// retry path in x-death for rejected orders, and the fallbacks in payments.
func checkDeadLetters(t *testing.T, queue string, ds []amqp.Delivery) {
	t.Helper()
	if queue == qShipmentsErr || queue == qBillingDLQ {
		checkFrameworkLetters(t, queue, ds)
		return
	}
	withoutID, binary := 0, 0
	for _, d := range ds {
		if d.MessageId == "" {
			withoutID++
		}
		if d.ContentType != "application/json" {
			binary++
		}
		deaths, _ := d.Headers["x-death"].([]any)
		last, _ := deaths[0].(amqp.Table)
		if last["reason"] != domain.ReasonRejected {
			continue
		}
		if got := deathCount(d.Headers, qOrders, domain.ReasonRejected); got != 3 {
			t.Errorf("%s: rejected order %s died %d times in orders, want 3", queue, d.MessageId, got)
		}
		for _, tier := range []string{qOrdersRetry, qOrdersRetry2} {
			if deathCount(d.Headers, tier, domain.ReasonExpired) != 1 {
				t.Errorf("%s: rejected order %s has no expired entry for %s in x-death %v", queue, d.MessageId, tier, deaths)
			}
		}
	}
	if queue == qPaymentsDLQ && (withoutID != 3 || binary != 1) {
		t.Errorf("%s: %d messages without message_id (want 3), %d non-JSON (want 1)", queue, withoutID, binary)
	}
}

func TestSeedInbox(t *testing.T) {
	tests := []struct {
		name      string
		dsn       string
		wantInbox bool
	}{
		{"marks about half of the orders DLQ event IDs processed", testPGDSN, true},
		{"logs one line and continues when PostgreSQL is unreachable", "postgres://postgres@127.0.0.1:1/test?connect_timeout=2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			o.InboxDSN = tt.dsn
			s := seed(t, o)
			if !tt.wantInbox {
				if s.Inbox != nil {
					t.Fatalf("Inbox = %+v, want nil", s.Inbox)
				}
				if n := o.Log.(*testLog).count("inbox skipped"); n != 1 {
					t.Errorf("logged %d inbox lines, want 1", n)
				}
				return
			}
			if s.Inbox == nil {
				t.Fatalf("Inbox = nil with PostgreSQL at %s", tt.dsn)
			}
			checkInbox(t, o.Vhost, s)
		})
	}
}

func checkInbox(t *testing.T, vhost string, s *Scene) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, testPGDSN)
	if err != nil {
		t.Fatalf("PostgreSQL at %s: %v", testPGDSN, err)
	}
	defer db.Close(context.Background())

	var inDLQ []string
	seen := map[string]bool{}
	browse(t, dialVhost(t, vhost), qOrdersDLQ, s.DLQs[0].Total(), func(ds []amqp.Delivery) {
		for _, d := range ds {
			if id, _ := d.Headers["event_id"].(string); !seen[id] {
				seen[id] = true
				inDLQ = append(inDLQ, id)
			}
		}
	})
	var applied, recent int
	err = db.QueryRow(ctx, `SELECT count(*) FROM `+inboxTable+` WHERE event_id = ANY($1)`, inDLQ).Scan(&applied)
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(s.Inbox.Applied) || applied < len(inDLQ)/2-1 || applied > len(inDLQ)/2+1 {
		t.Errorf("%d of %d DLQ event IDs processed (scene says %d), want about half", applied, len(inDLQ), len(s.Inbox.Applied))
	}
	err = db.QueryRow(ctx, `SELECT count(*) FROM `+inboxTable+` WHERE processed_at > now() - interval '10 minutes'`).Scan(&recent)
	if err != nil {
		t.Fatal(err)
	}
	if recent < 60 {
		t.Errorf("%d effects in the last 10 minutes, want a visible rate (>= 60)", recent)
	}
}

type queueStats struct {
	Consumers int `json:"consumers"`
	Unacked   int `json:"messages_unacknowledged"`
}

type channelStats struct {
	Confirm     bool `json:"confirm"`
	Unconfirmed int  `json:"messages_unconfirmed"`
}

func TestRunHoldsShippingUnackedGrowsEmailDrainsReindexAndStopsCleanly(t *testing.T) {
	o := testOptions(t)
	s := seed(t, o)
	conn := dialVhost(t, o.Vhost)
	emailStart, reindexStart := mustDepth(t, conn, qEmail), mustDepth(t, conn, qReindex)
	baseline := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, s) }()

	v := url.PathEscape(o.Vhost)
	eventually(t, 30*time.Second, "management API shows shipping's slow consumers holding deliveries", func() (bool, string) {
		var q queueStats
		getJSON(t, "/api/queues/"+v+"/"+qShipping, &q)
		return q.Consumers == shippingPeers && q.Unacked >= 2*shippingPrefch, fmt.Sprintf("%+v", q)
	})
	eventually(t, 15*time.Second, "a confirm-mode channel is open", func() (bool, string) {
		var chans []channelStats
		getJSON(t, "/api/vhosts/"+v+"/channels", &chans)
		for _, c := range chans {
			if c.Confirm {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", chans)
	})
	eventually(t, 15*time.Second, "email grows while reindex drains", func() (bool, string) {
		e, r := mustDepth(t, conn, qEmail), mustDepth(t, conn, qReindex)
		return e > emailStart+5 && r < reindexStart-20, fmt.Sprintf("email %d→%d, reindex %d→%d", emailStart, e, reindexStart, r)
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10 s of cancel")
	}
	eventually(t, 5*time.Second, "Run's goroutines are gone", func() (bool, string) {
		n := runtime.NumGoroutine()
		return n <= baseline, fmt.Sprintf("%d goroutines, %d before Run", n, baseline)
	})
}

// checkFrameworkLetters checks the framework error queues: every letter is
// read by its framework's convention, names its origin, and the letters
// fall into the failure groups the scene meant (3 for shipments, 2 for
// billing).
func checkFrameworkLetters(t *testing.T, queue string, ds []amqp.Delivery) {
	t.Helper()
	convention, origin, groups := domain.ConventionMassTransit, qShipments, 3
	if queue == qBillingDLQ {
		convention, origin, groups = domain.ConventionSpring, xBillingEvents+"/"+rkBilling, 2
	}
	seen := map[string]int{}
	for _, d := range ds {
		l := dlq.Decode(d, dlq.Options{}, false)
		if l.Failure.Convention != convention || l.Origin() != origin || l.Failure.ErrorType == "" || len(l.Failure.Missing) > 0 {
			t.Errorf("%s: %s read as %+v, origin %q", queue, d.MessageId, l.Failure, l.Origin())
		}
		seen[l.Group]++
	}
	if len(seen) != groups {
		t.Errorf("%s: %d failure groups %v, want %d", queue, len(seen), seen, groups)
	}
}
