//go:build integration

package actions

import (
	"context"
	"path/filepath"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/testkit"
)

// scene is an origin queue whose consumer rejected n messages into its
// DLQ: dead letters made by the broker itself.
type scene struct {
	vhost  string
	conn   *amqp.Connection
	ch     *amqp.Channel
	origin string
	dlq    string
	store  *audit.FileStore
}

func newScene(t testing.TB, n int, msg func(i int) amqp.Publishing) *scene {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	s := &scene{vhost: vhost, conn: conn, ch: testkit.Channel(t, conn), origin: "orders", dlq: "orders.dlq"}
	testkit.Declare(t, s.ch, s.dlq, nil)
	testkit.Declare(t, s.ch, s.origin, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": s.dlq})
	s.rejectInto(t, n, msg)
	st, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s.store = st
	return s
}

// rejectInto publishes n messages to the origin and rejects each without
// requeue, so the broker dead-letters them with x-death.
func (s *scene) rejectInto(t testing.TB, n int, msg func(i int) amqp.Publishing) {
	t.Helper()
	ctx := testCtx(t)
	if err := s.ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		dc, err := s.ch.PublishWithDeferredConfirmWithContext(ctx, "", s.origin, false, false, msg(i))
		if err != nil {
			t.Fatal(err)
		}
		if i == n-1 {
			if ok, err := dc.WaitContext(ctx); err != nil || !ok {
				t.Fatalf("publish not confirmed: %v", err)
			}
		}
	}
	consumer := testkit.Channel(t, s.conn)
	if err := consumer.Qos(500, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := consumer.Consume(s.origin, "rejecter", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		select {
		case d := <-deliveries:
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("timed out rejecting messages into the DLQ")
		}
	}
	if err := consumer.Cancel("rejecter", false); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, s.dlq, n)
}

// browse opens a session on the DLQ (or another queue of the scene) and
// holds everything in it.
func (s *scene) browse(t testing.TB, conn *amqp.Connection, queue string) (*dlq.Session, []domain.DeadLetter) {
	t.Helper()
	sess, letters, err := s.hold(testCtx(t), conn, queue)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, letters
}

// hold is browse for goroutines other than the test's own.
func (s *scene) hold(ctx context.Context, conn *amqp.Connection, queue string) (*dlq.Session, []domain.DeadLetter, error) {
	sess, err := dlq.Open(ctx, conn, domain.QueueInfo{Vhost: s.vhost, Name: queue, Type: domain.TypeClassic, DeliveryLimit: -1}, dlq.Options{Window: 4096})
	if err != nil {
		return nil, nil, err
	}
	for {
		page, err := sess.Next(ctx)
		if err != nil {
			sess.Close()
			return nil, nil, err
		}
		if page.End {
			return sess, sess.Letters(), nil
		}
	}
}

func (s *scene) env(sess *dlq.Session) Env {
	return Env{Conn: s.conn, Session: sess, Audit: s.store, Operator: "ana", Host: "test", Context: "local", ConnUser: "guest"}
}

func (s *scene) plan(t testing.TB, req Request) *Plan {
	t.Helper()
	if req.Action == "" {
		req.Action = ActionReplay
	}
	req.Vhost = s.vhost
	if req.Queue == "" {
		req.Queue = s.dlq
	}
	p, err := NewPlan(req)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// records reads the whole audit log and checks its chain.
func (s *scene) records(t testing.TB) []audit.Record {
	t.Helper()
	res, err := audit.Verify(context.Background(), s.store)
	if err != nil || !res.OK {
		t.Fatalf("audit chain: %v %v", res, err)
	}
	var out []audit.Record
	if err := s.store.Scan(context.Background(), func(r audit.Record) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func plain(i int) amqp.Publishing {
	return amqp.Publishing{MessageId: msgID(i), DeliveryMode: amqp.Persistent, Body: []byte(msgID(i))}
}
