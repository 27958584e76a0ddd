package effect

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/sources/mgmt"
)

// reader is a fake inbox: every queue has one, answering with the queue's
// name length as its rate, or err.
type reader struct{ err error }

func (reader) HasInbox(mgmt.QueueRef) bool { return true }

func (r reader) Effect(_ context.Context, ref mgmt.QueueRef, window time.Duration) (inbox.Effect, error) {
	return inbox.Effect{Rate: float64(len(ref.Name)), Window: window}, r.err
}

var orders, billing = mgmt.QueueRef{Vhost: "/", Name: "orders"}, mgmt.QueueRef{Vhost: "/", Name: "billing-x"}

func TestOneRoundAtATimeEndedOnlyByItsOwnAnswer(t *testing.T) {
	f := New(reader{})
	round := f.Fetch([]mgmt.QueueRef{orders})
	if round == nil {
		t.Fatal("no round started")
	}
	if f.Fetch([]mgmt.QueueRef{billing}) != nil {
		t.Fatal("a second round started while the first was running")
	}
	other := New(reader{err: errors.New("other screen")})
	if f.Done(other.Fetch([]mgmt.QueueRef{orders})().(Msg)) || !f.busy {
		t.Fatal("another fetcher's answer ended the round")
	}
	if !f.Done(round().(Msg)) || f.busy {
		t.Fatal("the round's own answer did not end it")
	}
	if f.Fetch([]mgmt.QueueRef{billing}) == nil {
		t.Fatal("no round after the first ended")
	}
}

func TestNothingToReadStartsNoRound(t *testing.T) {
	none := New(nil)
	if none.HasInbox(orders) || none.Fetch([]mgmt.QueueRef{orders}) != nil {
		t.Fatal("a fetcher without a reader reads")
	}
	f := New(reader{})
	if f.Fetch(nil) != nil || f.busy {
		t.Fatal("a round without queues started")
	}
}

func TestAnswersAreThoseOfTheirQueues(t *testing.T) {
	f := New(reader{})
	msg := f.Fetch([]mgmt.QueueRef{orders, billing})().(Msg)
	for _, ref := range []mgmt.QueueRef{orders, billing} {
		a, ok := msg.Answer(ref)
		if !ok || a.Effect.Rate != float64(len(ref.Name)) || a.Effect.Window != Window {
			t.Errorf("answer about %s = %+v, %v", ref.Name, a, ok)
		}
	}
	if _, ok := msg.Answer(mgmt.QueueRef{Vhost: "/", Name: "unasked"}); ok {
		t.Error("an answer about a queue the round did not ask about")
	}
}
