//go:build integration

package actions

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

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
	letters := make([]domain.DeadLetter, n)
	for i := range letters {
		letters[i] = domain.DeadLetter{MessageID: msgID(i), LogicalID: msgID(i), Body: []byte(msgID(i)), Size: len(msgID(i)),
			DeliveryCount: -1, AcquiredCount: -1, Headroom: -1}
	}
	dest := Destination{RoutingKey: "orders"}
	op := Walk{Request: Request{Action: ActionImport, Vhost: vhost, Queue: "orders.dlq", To: &Override{RoutingKey: "orders"}},
		Expect: n, Limit: n, Groups: []Group{{Dest: dest, Count: n}}}
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
