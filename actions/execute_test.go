//go:build integration

package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

func TestReplayDeliversByteIdenticalCopiesToTheOriginQueue(t *testing.T) {
	ts := time.Date(2024, 5, 1, 3, 15, 2, 0, time.UTC)
	body := func(i int) []byte { return append([]byte{0, 0xff, '\n'}, msgID(i)...) }
	s := newScene(t, 20, func(i int) amqp.Publishing {
		return amqp.Publishing{
			MessageId: msgID(i), CorrelationId: "corr-" + msgID(i), Timestamp: ts,
			ContentType: "application/octet-stream", ContentEncoding: "identity", Type: "order.created",
			AppId: "shop", Priority: 3, DeliveryMode: amqp.Persistent, ReplyTo: "replies",
			Headers: amqp.Table{"tenant": "t1", "n": int32(i), "nested": amqp.Table{"k": "v"}},
			Body:    body(i),
		}
	})
	sess, letters := s.browse(t, s.conn, s.dlq)
	if len(letters) != 20 {
		t.Fatalf("browsed %d letters, want 20", len(letters))
	}
	plan := s.plan(t, Request{Letters: letters})
	res, err := Execute(testCtx(t), plan, s.env(sess), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Selected != 20 || res.Confirmed != 20 || res.Returned+res.Nacked+res.Unknown+res.NotSent != 0 {
		t.Fatalf("result %+v, want 20 confirmed", res)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, 0)
	got := drain(t, s.ch, s.origin)
	if len(got) != 20 {
		t.Fatalf("origin holds %d, want 20", len(got))
	}
	for i, d := range got {
		if d.MessageId != msgID(i) || d.CorrelationId != "corr-"+msgID(i) || !d.Timestamp.Equal(ts) ||
			d.ContentType != "application/octet-stream" || d.ContentEncoding != "identity" || d.Type != "order.created" ||
			d.AppId != "shop" || d.Priority != 3 || d.DeliveryMode != amqp.Persistent || d.ReplyTo != "replies" {
			t.Fatalf("message %d properties changed: %+v", i, d)
		}
		if !bytes.Equal(d.Body, body(i)) {
			t.Fatalf("message %d body %q, want %q", i, d.Body, body(i))
		}
		if d.Headers["tenant"] != "t1" || d.Headers["n"] != int32(i) || !reflect.DeepEqual(d.Headers["nested"], amqp.Table{"k": "v"}) {
			t.Fatalf("message %d application headers changed: %v", i, d.Headers)
		}
		if _, ok := d.Headers["x-death"]; !ok {
			t.Fatalf("message %d lost its x-death history", i)
		}
		if d.Headers[HeaderReplayCount] != int64(1) || d.Headers[HeaderOperation] != res.Operation || d.Headers[HeaderReplayedAt] == nil {
			t.Fatalf("message %d warren headers: %v", i, d.Headers)
		}
		// Its failures so far, for its attempt count if it dies again.
		if d.Headers[domain.HeaderReplayAttempts] != int64(1) || !reflect.DeepEqual(d.Headers[domain.HeaderReplayDeaths], amqp.Table{s.origin: int64(1)}) {
			t.Fatalf("message %d carries attempts %v and deaths %v, want 1 and {%s: 1}", i, d.Headers[domain.HeaderReplayAttempts], d.Headers[domain.HeaderReplayDeaths], s.origin)
		}
	}
	recs := s.records(t)
	if first, last := recs[0], recs[len(recs)-1]; first.Outcome != domain.OutcomeIntent || last.Outcome != domain.OutcomeFinal ||
		len(first.LogicalIDs) != 20 || last.Detail[domain.OutcomeConfirmed] != "20" || first.Target != "queue:orders" {
		t.Fatalf("audit intent %+v\nfinal %+v", first, last)
	}
	if last := recs[len(recs)-1]; res.Head == nil || *res.Head != audit.HeadOf(last) {
		t.Fatalf("result's head %v, want the final record's, %v", res.Head, audit.HeadOf(last))
	}
}

// The broker closes the publishing channel once every copy is on the
// wire (here a user who may not write to the default exchange): the run
// says why, with the permission to ask for, the copies are unknown or
// not sent, and every source goes back to the DLQ.
func TestAPublishingChannelTheBrokerClosesIsNamed(t *testing.T) {
	const n = 30
	s := newScene(t, n, plain)
	user := "warren-readonly-" + strings.TrimPrefix(s.vhost, "warren-actions-")
	testkit.Mgmt(t, http.MethodPut, "/api/users/"+url.PathEscape(user), map[string]string{"password": "readonly", "tags": "monitoring"})
	t.Cleanup(func() { testkit.Mgmt(t, http.MethodDelete, "/api/users/"+url.PathEscape(user), nil) })
	testkit.Mgmt(t, http.MethodPut, "/api/permissions/"+url.PathEscape(s.vhost)+"/"+url.PathEscape(user),
		map[string]string{"configure": "", "write": "", "read": ".*"})
	u, err := url.Parse(testkit.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, "readonly")
	readonly, err := amqp.DialConfig(u.String(), amqp.Config{Vhost: s.vhost})
	if err != nil {
		t.Fatal(err)
	}
	defer readonly.Close()
	sess, letters := s.browse(t, s.conn, s.dlq)
	env := s.env(sess)
	env.Conn, env.ConnUser = readonly, user
	res, err := Execute(testCtx(t), s.plan(t, Request{Letters: letters}), env, nil)
	if !errors.Is(err, ErrPublisherClosed) || !strings.Contains(err.Error(), "needs the write permission") {
		t.Fatalf("Execute = %v, want the publishing channel's close and the permission it needs", err)
	}
	if res.Confirmed != 0 || res.Unknown+res.NotSent != n {
		t.Fatalf("confirmed %d, unknown %d, not sent %d; want all %d unknown or not sent", res.Confirmed, res.Unknown, res.NotSent, n)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, n)
}

func TestReplayLeavesUndeliverableMessagesInTheDLQ(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(t *testing.T, s *scene)
		to      *Override
		want    map[Outcome]int
		origin  int
	}{
		{
			name:    "the origin queue deleted: every message returned",
			breakIt: func(t *testing.T, s *scene) { deleteQueue(t, s.ch, s.origin) },
			want:    map[Outcome]int{Returned: 30},
		},
		{
			name: "an exchange without a binding: every message returned",
			breakIt: func(t *testing.T, s *scene) {
				if err := s.ch.ExchangeDeclare("orders.x", "direct", true, false, false, false, nil); err != nil {
					t.Fatal(err)
				}
			},
			to:     &Override{Exchange: "orders.x", RoutingKey: "order.created"},
			want:   map[Outcome]int{Returned: 30},
			origin: 0,
		},
		{
			name: "the origin full under reject-publish: the rest nacked",
			breakIt: func(t *testing.T, s *scene) {
				deleteQueue(t, s.ch, s.origin)
				testkit.Declare(t, s.ch, s.origin, amqp.Table{"x-max-length": int32(4), "x-overflow": "reject-publish"})
			},
			want:   map[Outcome]int{Confirmed: 4, Nacked: 26},
			origin: 4,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScene(t, 30, plain)
			tc.breakIt(t, s)
			sess, letters := s.browse(t, s.conn, s.dlq)
			res, err := Execute(testCtx(t), s.plan(t, Request{Letters: letters, To: tc.to}), s.env(sess), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[Outcome]int{Confirmed: res.Confirmed, Returned: res.Returned, Nacked: res.Nacked, Unknown: res.Unknown}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("outcomes %v, want %v", got, tc.want)
				}
			}
			if err := sess.Close(); err != nil {
				t.Fatal(err)
			}
			// The DLQ loses exactly the confirmed messages.
			testkit.WaitDepth(t, s.ch, s.dlq, 30-res.Confirmed)
			if tc.origin > 0 {
				testkit.WaitDepth(t, s.ch, s.origin, tc.origin)
			}
		})
	}
}

func TestQuarantineMovesTheSelectionToTheParkingQueueWithItsReason(t *testing.T) {
	s := newScene(t, 10, plain)
	sess, letters := s.browse(t, s.conn, s.dlq)
	parking := s.dlq + ".quarantine"
	plan := s.plan(t, Request{Action: ActionQuarantine, Letters: letters[:6], Parking: parking, Reason: "schema v1 payload"})
	res, err := Execute(testCtx(t), plan, s.env(sess), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed != 6 {
		t.Fatalf("result %+v, want 6 confirmed", res)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, 4)
	parked := drain(t, s.ch, parking)
	if len(parked) != 6 {
		t.Fatalf("parking queue holds %d, want 6", len(parked))
	}
	for _, d := range parked {
		if d.Headers[HeaderQuarantineReason] != "schema v1 payload" || d.Headers[HeaderQuarantineBy] != "ana" || d.Headers[HeaderQuarantineAt] == nil {
			t.Fatalf("parked message headers %v", d.Headers)
		}
	}
	intent := s.records(t)[0]
	if intent.Detail["declare_parking_queue"] != "true" || intent.Detail["reason"] != "schema v1 payload" {
		t.Fatalf("intent detail %v", intent.Detail)
	}
}

func TestReleaseFromTheParkingQueueReachesTheOriginAndLooksUnquarantined(t *testing.T) {
	s := newScene(t, 5, plain)
	parking := s.dlq + ".quarantine"
	sess, letters := s.browse(t, s.conn, s.dlq)
	if _, err := Execute(testCtx(t), s.plan(t, Request{Action: ActionQuarantine, Letters: letters, Parking: parking, Reason: "hold"}), s.env(sess), nil); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, parking, 5)
	psess, parked := s.browse(t, s.conn, parking)
	for _, d := range parked {
		if !d.Quarantined {
			t.Fatalf("parked letter %s not seen as quarantined", d.MessageID)
		}
	}
	bulk := s.plan(t, Request{Queue: parking, Letters: parked})
	if bulk.Selected() != 0 || bulk.SkippedQuarantined != 5 {
		t.Fatalf("a bulk replay selected %d quarantined messages", bulk.Selected())
	}
	res, err := Execute(testCtx(t), s.plan(t, Request{Queue: parking, Letters: parked, Release: true}), s.env(psess), nil)
	if err != nil || res.Confirmed != 5 {
		t.Fatalf("release: %+v %v", res, err)
	}
	testkit.WaitDepth(t, s.ch, parking, 0)
	for _, d := range drain(t, s.ch, s.origin) {
		if _, ok := d.Headers[HeaderQuarantineReason]; ok {
			t.Fatalf("released message still marked quarantined: %v", d.Headers)
		}
	}
}

func TestAppliedMessagesAreSkippedCountedAndStay(t *testing.T) {
	s := newScene(t, 10, plain)
	sess, letters := s.browse(t, s.conn, s.dlq)
	applied := map[string]bool{msgID(1): true, msgID(4): true, msgID(7): true}
	plan := s.plan(t, Request{Letters: letters, InboxKnown: true, Applied: applied})
	res, err := Execute(testCtx(t), plan, s.env(sess), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Selected != 7 || res.SkippedApplied != 3 || res.Confirmed != 7 {
		t.Fatalf("result %+v, want 7 confirmed and 3 skipped", res)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, 3)
	var skipped []string
	for _, r := range s.records(t) {
		if r.Outcome == domain.OutcomeSkippedApplied {
			skipped = append(skipped, r.LogicalIDs...)
		}
	}
	if fmt.Sprint(skipped) != fmt.Sprint([]string{msgID(1), msgID(4), msgID(7)}) {
		t.Fatalf("skipped_applied records list %v", skipped)
	}
}

func TestAnUnwritableAuditStoreRefusesBeforeAnyMessageMoves(t *testing.T) {
	s := newScene(t, 5, plain)
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := audit.OpenFile(filepath.Join(blocker, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sess, letters := s.browse(t, s.conn, s.dlq)
	env := s.env(sess)
	env.Audit = st
	res, err := Execute(testCtx(t), s.plan(t, Request{Letters: letters}), env, nil)
	if !errors.Is(err, ErrAuditUnavailable) {
		t.Fatalf("error %v, want ErrAuditUnavailable", err)
	}
	if res.Confirmed+res.Returned+res.Nacked+res.Unknown != 0 {
		t.Fatalf("something was published: %+v", res)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, 5)
	if n := testkit.Depth(t, s.ch, s.origin); n != 0 {
		t.Fatalf("origin received %d messages", n)
	}
}

func TestCancelStopsSendingSettlesInFlightAndReports(t *testing.T) {
	s := newScene(t, 400, plain)
	sess, letters := s.browse(t, s.conn, s.dlq)
	ctx, cancel := context.WithCancel(testCtx(t))
	// At 100 a second the 400 take four seconds to send: the cancel at
	// the 20th confirm comes long before the last publish, however late
	// a loaded broker confirms.
	plan := s.plan(t, Request{Letters: letters, Rate: 100})
	var seen []Progress
	res, err := Execute(ctx, plan, s.env(sess), func(p Progress) {
		seen = append(seen, p)
		if p.Confirmed >= 20 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.NotSent == 0 || res.Confirmed < 20 || res.Confirmed+res.NotSent+res.Unknown != 400 {
		t.Fatalf("result %+v: want a cancel with confirmed and not-sent messages", res)
	}
	if last := seen[len(seen)-1]; !last.Done || last.Confirmed != res.Confirmed {
		t.Fatalf("last progress %+v, result %+v", last, res)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, 400-res.Confirmed)
	testkit.WaitDepth(t, s.ch, s.origin, res.Confirmed)
	final := s.records(t)
	if f := final[len(final)-1]; f.Outcome != domain.OutcomeFinal || f.Detail["cancelled"] != "true" {
		t.Fatalf("final record %+v", f)
	}
}

func deleteQueue(t *testing.T, ch *amqp.Channel, name string) {
	t.Helper()
	if _, err := ch.QueueDelete(name, false, false, false); err != nil {
		t.Fatal(err)
	}
}

func TestRateLimitSpacesThePublishes(t *testing.T) {
	const n, perSecond = 300, 1000.0
	s := newScene(t, n, plain)
	sess, letters := s.browse(t, s.conn, s.dlq)
	start := time.Now()
	res, err := Execute(testCtx(t), s.plan(t, Request{Letters: letters, Rate: perSecond}), s.env(sess), nil)
	if err != nil || res.Confirmed != n {
		t.Fatalf("result %+v, %v", res, err)
	}
	// Past the burst of 20 ms, every message waits for its token.
	if least := time.Duration(float64(n-perSecond/50) / perSecond * float64(time.Second)); time.Since(start) < least {
		t.Fatalf("%d messages at %g/s took %s, less than %s", n, perSecond, time.Since(start), least)
	}
}
