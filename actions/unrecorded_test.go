//go:build integration

package actions

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// lettersSource hands out letters from memory, as an export file does:
// nothing to ack.
type lettersSource struct{ letters []domain.DeadLetter }

func (s *lettersSource) Next(_ context.Context, n int) ([]domain.DeadLetter, bool, error) {
	k := min(n, len(s.letters))
	out := s.letters[:k]
	s.letters = s.letters[k:]
	return out, len(s.letters) == 0, nil
}
func (s *lettersSource) Keep(int)              {}
func (s *lettersSource) Ack(uint64) error      { return nil }
func (s *lettersSource) AckAll([]uint64) error { return nil }
func (s *lettersSource) Sync() error           { return nil }

// importToOrders is n letters from memory and a walk importing them
// into the queue orders, as an import of a file does.
func importToOrders(vhost string, n int) ([]domain.DeadLetter, Walk) {
	letters := make([]domain.DeadLetter, n)
	for i := range letters {
		letters[i] = domain.DeadLetter{MessageID: msgID(i), LogicalID: msgID(i), Body: []byte(msgID(i)), Size: len(msgID(i)),
			DeliveryCount: -1, AcquiredCount: -1, Headroom: -1}
	}
	dest := Destination{RoutingKey: "orders"}
	return letters, Walk{Request: Request{Action: ActionImport, Vhost: vhost, Queue: "orders.dlq", To: &Override{RoutingKey: "orders"}},
		Expect: n, Limit: n, Groups: []Group{{Dest: dest, Count: n}}}
}

// heldConfirms stores records as its file store does, but a group with a
// confirmed record waits until release closes.
type heldConfirms struct {
	*audit.FileStore
	release chan struct{}
}

func (h *heldConfirms) AppendAll(ctx context.Context, recs []audit.Record) ([]audit.Record, error) {
	if slices.ContainsFunc(recs, func(r audit.Record) bool { return r.Outcome == domain.OutcomeConfirmed }) {
		<-h.release
	}
	return h.FileStore.AppendAll(ctx, recs)
}

// While confirmed copies wait for their record, the walk publishes no
// more: at most a window of copies exists without a record of its
// outcome, which is what a crash can leave published twice.
func TestAWalkPublishesAtMostAWindowWithoutARecordOfItsOutcome(t *testing.T) {
	const window, n = 16, 5 * 16
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "orders", nil)
	file, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	store := &heldConfirms{FileStore: file, release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(store.release) }) }
	t.Cleanup(release) // a failure below leaves no walk waiting
	letters, op := importToOrders(vhost, n)
	env := Env{Conn: conn, Audit: store, Window: window, Operator: "ana", Host: "test", Context: "local", ConnUser: "guest"}
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := RunWalk(testCtx(t), &lettersSource{letters: letters}, op, env, nil)
		done <- outcome{res, err}
	}()
	testkit.WaitDepth(t, ch, "orders", window)
	time.Sleep(300 * time.Millisecond) // room to go past the bound, were there any
	if got := testkit.Depth(t, ch, "orders"); got != window {
		t.Fatalf("with no confirm recorded, %d copies were published; want one window, %d", got, window)
	}
	release()
	out := <-done
	if out.err != nil || out.res.Confirmed != n {
		t.Fatalf("walk: %+v, %v; want %d confirmed", out.res, out.err, n)
	}
	testkit.WaitDepth(t, ch, "orders", n)
}

// publisherLost closes the publisher's connection as the walk asks for
// its second page, and gives the walk time to see the publisher gone
// before the page comes.
type publisherLost struct {
	lettersSource
	conn  *amqp.Connection
	calls int
}

func (s *publisherLost) Next(ctx context.Context, n int) ([]domain.DeadLetter, bool, error) {
	if s.calls++; s.calls == 2 {
		s.conn.Close()
		time.Sleep(300 * time.Millisecond)
	}
	return s.lettersSource.Next(ctx, n)
}

// The publisher's channel closes (here its connection; a permission the
// user lacks closes it as well) while the walk reads a page: the walk
// ends with the publisher's error, every message counted not sent, and
// the audit log says so. Before, the settling side closed the journal
// under the reading side, which crashed recording the page it read.
func TestAWalkWhosePublisherIsLostMidPageEndsCleanly(t *testing.T) {
	const n = 3 * pageSize
	vhost := testkit.Vhost(t, "warren-actions")
	conn := testkit.Dial(t, vhost)
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	testkit.Declare(t, ch, "orders", nil)
	store, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	letters, op := importToOrders(vhost, n)
	env := Env{Conn: conn, Audit: store, Operator: "ana", Host: "test", Context: "local", ConnUser: "guest"}
	res, err := RunWalk(testCtx(t), &publisherLost{lettersSource: lettersSource{letters: letters}, conn: conn}, op, env, nil)
	if !errors.Is(err, ErrPublisherClosed) {
		t.Fatalf("walk: %v; want the publisher's channel named", err)
	}
	if res.Confirmed != 0 || res.NotSent != 2*pageSize {
		t.Fatalf("confirmed %d, not sent %d; want the two pages read counted not sent", res.Confirmed, res.NotSent)
	}
	if got := testkit.Depth(t, ch, "orders"); got != 0 {
		t.Fatalf("%d copies reached orders; want none", got)
	}
	notSent := 0
	err = store.Scan(context.Background(), func(r audit.Record) error {
		if r.Outcome == domain.OutcomeNotSent {
			notSent += len(r.MessageIDs)
		}
		return nil
	})
	if err != nil || notSent != 2*pageSize {
		t.Fatalf("the audit log records %d not sent (%v); want %d", notSent, err, 2*pageSize)
	}
}
