package ui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/styles"
)

// ordersInbox gives orders an inbox with a steady pace.
type ordersInbox struct{}

func (ordersInbox) HasInbox(ref domain.QueueRef) bool { return ref.Name == "orders" }

func (ordersInbox) Effect(_ context.Context, _ domain.QueueRef, window time.Duration) (domain.Effect, error) {
	return domain.Effect{Window: window, Count: 5880, Rate: 98, Now: clock, Last: clock.Add(-time.Second)}, nil
}

func TestEffectsReachTheOverviewAndTheQueueScreen(t *testing.T) {
	st := styles.New(true)
	m := New(wired(Options{Context: "prod-eu", Refresh: time.Hour, Styles: &st, Now: fixedNow}, &fakeBroker{}, &fakeBroker{}, ordersInbox{}))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	// The effects come after the snapshot, so once they show, the
	// columns are there too; WaitFor consumes what it reads.
	waitFor(t, tm, "inbox: 98 effects/s over the last 1m, last 1s ago")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	// The queue screen words the pace as the overview does, so wait for
	// the screen's title and the pace together.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("Queues › orders")) && bytes.Contains(b, []byte("inbox: 98 effects/s over the last 1m, last 1s ago"))
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	finalView(t, tm)
}
