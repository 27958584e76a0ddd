package ui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/styles"
)

// pagingBroker answers a first page at once and holds the full snapshot
// back until released, as a large broker does.
type pagingBroker struct {
	fakeBroker
	release chan struct{}
}

func (p *pagingBroker) FirstPage(_ context.Context, vhost string, size int) (*domain.Snapshot, error) {
	s := scene()
	s.Overview.PublishRate, s.Overview.AckRate, s.Overview.RatesUnknown = 0, 0, true
	s.Queues = s.Queues[:min(size, 2)]
	s.Partial, s.QueueTotal = true, 8
	return s, nil
}

func (p *pagingBroker) Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	select {
	case <-p.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.fakeBroker.Snapshot(ctx, o)
}

// The first page's header shows the message totals the broker counted and
// says the rates are not known yet, rather than 0/s; the full snapshot
// brings them.
func TestTheFirstPageHeaderLeavesTheRatesUnknownUntilTheFullSnapshot(t *testing.T) {
	b := &pagingBroker{release: make(chan struct{})}
	st := styles.New(true)
	m := New(wired(Options{Context: "prod-eu", Refresh: 20 * time.Millisecond, Styles: &st, Now: fixedNow}, b, b, nil))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	// One frame: the partial page, its totals and no rates (waitFor
	// consumes what it read).
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("2 deepest shown, loading all 8 queues")) &&
			bytes.Contains(b, []byte("messages 18390 (ready 18290, unacked 100) · publish —/s ack —/s"))
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	close(b.release)
	waitFor(t, tm, "publish 157/s ack 155/s")
	if view := string(finalView(t, tm)); !strings.Contains(view, "messages 18390 (ready 18290, unacked 100)") || strings.Contains(view, "—/s") {
		t.Fatalf("after the full snapshot the header says:\n%s", view)
	}
}
