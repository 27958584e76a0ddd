//go:build integration

package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/testkit"
)

func TestConcurrentReplaysConfirmEveryLogicalIDExactlyOnce(t *testing.T) {
	const n = 2000
	s := newScene(t, n, plain)
	results := make(chan outcome, 2)
	start := make(chan struct{})
	for range 2 {
		conn := testkit.Dial(t, s.vhost)
		store, err := audit.OpenFile(s.store.Path())
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			<-start
			results <- s.replayAll(conn, store)
		}()
	}
	close(start)
	total, started := 0, 0
	for range 2 {
		o := <-results
		if o.err != nil {
			t.Fatal(o.err)
		}
		if o.res.Returned+o.res.Nacked+o.res.Unknown != 0 {
			t.Fatalf("result %+v", o.res)
		}
		t.Logf("one replay confirmed %d", o.res.Confirmed)
		total += o.res.Confirmed
		if o.res.Selected > 0 {
			started++
		}
	}
	if total != n {
		t.Fatalf("%d confirmed in total, want %d", total, n)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, 0)
	seen := map[string]int{}
	for _, d := range drain(t, s.ch, s.origin) {
		seen[d.MessageId]++
	}
	for i := range n {
		if seen[msgID(i)] != 1 {
			t.Fatalf("logical ID %s reached the origin %d times", msgID(i), seen[msgID(i)])
		}
	}
	finals := 0
	for _, r := range s.records(t) {
		if r.Outcome == domain.OutcomeFinal {
			finals++
		}
	}
	// Either operator may hold every message before the other starts;
	// a replay with nothing to move writes no record at all.
	if finals != started {
		t.Fatalf("%d final records in the shared chain, want one for each of the %d replays that moved messages", finals, started)
	}
}

type outcome struct {
	res *Result
	err error
}

// replayAll is one operator's whole replay, as a process would run it.
func (s *scene) replayAll(conn *amqp.Connection, store audit.Store) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	sess, letters, err := s.hold(ctx, conn, s.dlq)
	if err != nil {
		return outcome{err: err}
	}
	defer sess.Close()
	plan, err := NewPlan(Request{Action: ActionReplay, Vhost: s.vhost, Queue: s.dlq, Letters: letters})
	if err != nil {
		return outcome{err: err}
	}
	env := s.env(sess)
	env.Conn, env.Audit = conn, store
	res, err := Execute(ctx, plan, env, nil)
	if cerr := sess.Close(); err == nil {
		err = cerr
	}
	return outcome{res, err}
}

func TestLosingTheBrowseSessionStopsPublishingAndLosesNothing(t *testing.T) {
	const n = 300
	s := newScene(t, n, plain)
	browseConn := testkit.Dial(t, s.vhost)
	sess, letters := s.browse(t, browseConn, s.dlq)
	closed := false
	res, err := Execute(testCtx(t), s.plan(t, Request{Letters: letters, Rate: 300}), s.env(sess), func(p Progress) {
		if p.Confirmed >= 20 && !closed {
			closed = true
			browseConn.Close()
		}
	})
	if !errors.Is(err, ErrSessionLost) {
		t.Fatalf("error %v, want ErrSessionLost", err)
	}
	if res.NotSent == 0 || res.Confirmed+res.Unknown+res.NotSent != n {
		t.Fatalf("confirmed %d, unknown %d, not sent %d of %d: want publishing stopped part way",
			res.Confirmed, res.Unknown, res.NotSent, n)
	}
	// Every published copy arrived. A source whose ack was proven left
	// the DLQ; one whose ack was not proven (unknown) may be back there
	// too, so it may exist twice, and nothing is lost.
	testkit.WaitDepth(t, s.ch, s.origin, res.Confirmed+res.Unknown)
	// The browse's deliveries go back as its connection closes.
	d := testkit.Depth(t, s.ch, s.dlq)
	for deadline := time.Now().Add(15 * time.Second); d < n-res.Confirmed-res.Unknown && time.Now().Before(deadline); d = testkit.Depth(t, s.ch, s.dlq) {
		time.Sleep(20 * time.Millisecond)
	}
	if d < n-res.Confirmed-res.Unknown || d > n-res.Confirmed {
		t.Fatalf("DLQ holds %d; want between %d and %d", d, n-res.Confirmed-res.Unknown, n-res.Confirmed)
	}
}

func TestReplayFromAStreamRecordsOffsetsAndRemovesNothing(t *testing.T) {
	s := newScene(t, 6, plain)
	// The broker (3.10) does not dead-letter into a stream, so the
	// broker's dead letters are copied there, x-death and all.
	stream := s.dlq + ".stream"
	testkit.Declare(t, s.ch, stream, amqp.Table{"x-queue-type": "stream"})
	for _, d := range drain(t, s.ch, s.dlq) {
		err := s.ch.Publish("", stream, false, false, amqp.Publishing{Headers: d.Headers, MessageId: d.MessageId, DeliveryMode: d.DeliveryMode, Body: d.Body})
		if err != nil {
			t.Fatal(err)
		}
	}
	s.dlq = stream

	// Browsing from offset 1 leaves offset 0 out of the selection: the
	// offsets recorded must be exactly those of the letters acted on.
	ctx := testCtx(t)
	sess, err := dlq.Open(ctx, s.conn, domain.QueueInfo{Vhost: s.vhost, Name: s.dlq, Type: domain.TypeStream, DeliveryLimit: -1}, dlq.Options{StartOffset: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for {
		page, err := sess.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if page.End {
			break
		}
	}
	env := s.env(sess)
	env.Stream = sess.ReadOnly()
	res, err := Execute(ctx, s.plan(t, Request{Letters: sess.Letters()}), env, nil)
	if err != nil || res.Confirmed != 5 {
		t.Fatalf("result %+v, %v", res, err)
	}
	testkit.WaitDepth(t, s.ch, s.origin, 5)
	var offsets []string
	for _, r := range s.records(t) {
		if r.Outcome == domain.OutcomeConfirmed {
			if err := json.Unmarshal([]byte(r.Detail["offsets"]), &offsets); err != nil {
				t.Fatalf("offsets detail %q: %v", r.Detail["offsets"], err)
			}
		}
	}
	if fmt.Sprint(offsets) != "[1 2 3 4 5]" {
		t.Fatalf("recorded offsets %v, want the five stream offsets", offsets)
	}
	if again := sess.Letters(); len(again) != 5 {
		t.Fatalf("the stream session lost letters: %d", len(again))
	}
}
