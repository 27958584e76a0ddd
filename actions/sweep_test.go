//go:build integration

package actions

import (
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/testkit"
)

// When the broker hands back deliveries whose acks it lost (a quorum
// leader change), their sources are in the DLQ again beside confirmed
// copies. The test plays the broker's part: as the feed closes, the
// sources of two confirmed copies are put back into the DLQ. And, as
// when the consumer still fails, one copy is rejected at the origin and
// the broker dead-letters it back: same IDs and body as its source, but
// the only one of its message left. The sweep finds exactly the two
// twins, records them as deduplicated before the final record, and
// leaves every other message where it was, the copy that died again
// among them.
func TestTheSweepRemovesTwinsOfConfirmedCopiesAndNothingElse(t *testing.T) {
	s := newScene(t, 6, plain)
	q := domain.QueueInfo{Vhost: s.vhost, Name: s.dlq, Type: domain.TypeClassic, DeliveryLimit: -1}
	// The two to come back, in their exact form.
	var back []amqp.Publishing
	for _, d := range drainKeep(t, s, 6) {
		if d.MessageId == "m-00001" || d.MessageId == "m-00003" {
			back = append(back, amqp.Publishing{MessageId: d.MessageId, Headers: d.Headers, DeliveryMode: d.DeliveryMode, Body: d.Body})
		}
	}
	feed, err := dlq.OpenFeed(s.conn, q, dlq.Options{}, 6, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := domain.CompileFilter(`message_id in ["m-00000", "m-00001", "m-00002", "m-00003"]`)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	var diedAgain string
	op := Walk{
		Request: Request{Action: ActionReplay, Vhost: s.vhost, Queue: s.dlq, Filter: f, FilterText: "four of six"},
		Limit:   6,
		Close: func() error {
			if err := feed.Close(); err != nil {
				return err
			}
			// The broker's part: two confirmed sources come back.
			for _, p := range back {
				if err := s.ch.Publish("", s.dlq, false, false, p); err != nil {
					return err
				}
			}
			// The consumer's: it fails again on one copy.
			d, ok, err := s.ch.Get(s.origin, false)
			if err != nil || !ok {
				t.Fatalf("no copy at the origin to reject (%v)", err)
			}
			diedAgain = d.MessageId
			if err := d.Reject(false); err != nil {
				return err
			}
			testkit.WaitDepth(t, s.ch, s.dlq, 2+len(back)+1)
			return nil
		},
		Sweep: func() (SweepSource, error) { return dlq.OpenFeed(s.conn, q, dlq.Options{}, 2+len(back)+1, 0) },
	}
	res, err := RunWalk(testCtx(t), feed, op, s.env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed != 4 || res.Deduplicated != 2 || res.SweepNote == "" {
		t.Fatalf("result: confirmed %d, deduplicated %d, note %q; want 4, 2 and a note", res.Confirmed, res.Deduplicated, res.SweepNote)
	}
	var copyBack string
	for _, d := range drain(t, s.ch, s.dlq) {
		if op, _ := d.Headers[HeaderOperation].(string); op == res.Operation {
			copyBack = d.MessageId
			continue
		}
		kept = append(kept, d.MessageId)
	}
	if !slices.Equal(kept, []string{"m-00004", "m-00005"}) {
		t.Errorf("the DLQ holds %v, want the two the filter left, and no twin", kept)
	}
	if copyBack == "" || copyBack != diedAgain {
		t.Errorf("the copy of %s that died again is not in the DLQ (found %q): the sweep took the only one of its message for a twin", diedAgain, copyBack)
	}
	recs := s.records(t)
	var dedup []string
	final := -1
	for i, r := range recs {
		switch r.Outcome {
		case domain.OutcomeDeduplicated:
			dedup = append(dedup, r.MessageIDs...)
		case domain.OutcomeFinal:
			final = i
		}
	}
	slices.Sort(dedup)
	if !slices.Equal(dedup, []string{"m-00001", "m-00003"}) || final != len(recs)-1 {
		t.Errorf("deduplicated records name %v (final record at %d of %d); want the two twins, before the final record", dedup, final, len(recs))
	}
	if last := recs[len(recs)-1]; res.Head == nil || *res.Head != audit.HeadOf(last) {
		t.Errorf("result's head %v, want the final record's, %v", res.Head, audit.HeadOf(last))
	}
}

// drainKeep reads n messages of the DLQ and gives them back in order.
func drainKeep(t *testing.T, s *scene, n int) []amqp.Delivery {
	t.Helper()
	ch := testkit.Channel(t, s.conn)
	var out []amqp.Delivery
	for len(out) < n {
		d, ok, err := ch.Get(s.dlq, false)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, d)
		}
	}
	if err := ch.Nack(0, true, true); err != nil {
		t.Fatal(err)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, n)
	return out
}
