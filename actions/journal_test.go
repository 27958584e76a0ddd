package actions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

func journalRecord(i int) audit.Record {
	op := audit.Op{ID: "op-1", Action: "replay", Vhost: "/", Queue: "orders.dlq"}
	return op.Outcome(domain.OutcomeConfirmed, []string{fmt.Sprintf("m-%d", i)}, []string{fmt.Sprintf("ev-%d", i)}, nil)
}

func TestTheJournalStoresRecordsInTheOrderHandedInAndCallsBackInOrder(t *testing.T) {
	store, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j := newJournal(context.Background(), store)
	const n = 500
	var called []int
	for i := range n {
		j.submit(journalRecord(i), func(err error) {
			if err != nil {
				t.Errorf("record %d: %v", i, err)
			}
			called = append(called, i) // the journal's goroutine only
		})
	}
	if err := j.write(journalRecord(n)); err != nil {
		t.Fatal(err)
	}
	j.close()
	if len(called) != n {
		t.Fatalf("%d callbacks for %d records", len(called), n)
	}
	for i, c := range called {
		if c != i {
			t.Fatalf("callback %d came for record %d", i, c)
		}
	}
	i := 0
	err = store.Scan(context.Background(), func(r audit.Record) error {
		if want := fmt.Sprintf("m-%d", i); r.MessageIDs[0] != want || r.Seq != int64(i+1) {
			return fmt.Errorf("record %d is seq %d for %s, want %s", i, r.Seq, r.MessageIDs[0], want)
		}
		i++
		return nil
	})
	if err != nil || i != n+1 {
		t.Fatalf("scanned %d records: %v", i, err)
	}
	if res, err := audit.Verify(context.Background(), store); err != nil || !res.OK {
		t.Fatalf("verify: %+v, %v", res, err)
	}
}

// After a record cannot be stored, nothing handed in later is stored,
// even once the disk works again: a confirm recorded after a missing one
// would let its source be acked out of the order resume relies on.
func TestTheJournalsFirstFailureSticks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	store, err := audit.OpenFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j := newJournal(context.Background(), store)
	if err := j.write(journalRecord(1)); err != nil {
		t.Fatal(err)
	}
	// The directory gives way to a file: the store cannot open its file.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := j.write(journalRecord(2)); err == nil {
		t.Fatal("a record was stored in a directory that is a file")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	var later error
	j.submit(journalRecord(3), func(err error) { later = err })
	j.close()
	if later == nil {
		t.Fatal("a record handed in after a failure was stored")
	}
	if _, err := os.Stat(filepath.Join(dir, "audit.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("the store wrote after the failure: %v", err)
	}
}

// groupsStore counts the records of each group commit.
type groupsStore struct {
	audit.Store
	mu     sync.Mutex
	groups []int
}

func (s *groupsStore) AppendAll(ctx context.Context, recs []audit.Record) ([]audit.Record, error) {
	s.mu.Lock()
	s.groups = append(s.groups, len(recs))
	s.mu.Unlock()
	return s.Store.AppendAll(ctx, recs)
}

// Group commits are spaced: the next starts commitSpacing after the last
// ended, and takes in what came meanwhile; after a quiet spell a record
// is written at once.
func TestTheJournalSpacesItsGroupCommitsAndGathersMeanwhile(t *testing.T) {
	file, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	store := &groupsStore{Store: file}
	var mu sync.Mutex
	clock := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	sleeping, wake := make(chan time.Duration, 1), make(chan struct{})
	j := startJournal(context.Background(), store, now, func(d time.Duration) {
		sleeping <- d
		<-wake
		advance(d)
	})
	if err := j.write(journalRecord(0)); err != nil { // no commit before: at once
		t.Fatal(err)
	}
	stored := make(chan error, 1)
	j.submit(journalRecord(1), func(err error) { stored <- err })
	select {
	case d := <-sleeping:
		if d != commitSpacing {
			t.Fatalf("the commit after one that just ended waits %s, want %s", d, commitSpacing)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the commit after one that just ended did not wait")
	}
	for i := 2; i <= 5; i++ {
		j.submit(journalRecord(i), nil)
	}
	close(wake)
	if err := <-stored; err != nil {
		t.Fatal(err)
	}
	advance(time.Second)
	if err := j.write(journalRecord(6)); err != nil { // after a quiet spell: at once
		t.Fatal(err)
	}
	j.close()
	select {
	case d := <-sleeping:
		t.Fatalf("a record after a quiet spell waited %s", d)
	default:
	}
	if want := []int{1, 5, 1}; !slices.Equal(store.groups, want) {
		t.Fatalf("group commits of %v records, want %v", store.groups, want)
	}
}

// A flush returns once everything handed in before it is stored and
// called back, writes no record of its own, and leaves the journal open
// for what comes after.
func TestAFlushWaitsForWhatCameBeforeAndLeavesTheJournalOpen(t *testing.T) {
	store, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j := newJournal(context.Background(), store)
	var called int // written on the journal's goroutine, read after flush
	for i := range 100 {
		j.submit(journalRecord(i), func(error) { called++ })
	}
	j.flush()
	if called != 100 {
		t.Fatalf("flush returned after %d of 100 callbacks", called)
	}
	if err := j.write(journalRecord(100)); err != nil {
		t.Fatalf("a record after a flush: %v", err)
	}
	j.close()
	n := 0
	if err := store.Scan(context.Background(), func(audit.Record) error { n++; return nil }); err != nil || n != 101 {
		t.Fatalf("%d records stored (%v), want 101: a flush writes none", n, err)
	}
}

// hungStore is a store whose appends wait until their context ends, as
// one behind a network that drops packets does.
type hungStore struct{ audit.Store }

func (hungStore) AppendAll(ctx context.Context, _ []audit.Record) ([]audit.Record, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A store that hangs fails the journal within appendTimeout, so the walk
// stops, its operation open, instead of waiting for good.
func TestAJournalOnAStoreThatHangsFails(t *testing.T) {
	defer func(d time.Duration) { appendTimeout = d }(appendTimeout)
	appendTimeout = 50 * time.Millisecond
	j := newJournal(context.Background(), hungStore{})
	done := make(chan error, 1)
	go func() { done <- j.write(journalRecord(1)) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "did not answer within 50ms") {
			t.Fatalf("write to a hung store: %v; want it failed, naming the wait", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a write to a hung store still waits after 5 s")
	}
	if err := j.write(journalRecord(2)); err == nil {
		t.Fatal("the journal took a record after its store failed")
	}
	j.close()
}
