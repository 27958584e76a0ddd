package effect

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

// reader is a fake inbox: every queue has one, answering with the queue's
// name length as its rate, or err.
type reader struct{ err error }

func (reader) HasInbox(domain.QueueRef) bool { return true }

func (r reader) Effect(_ context.Context, ref domain.QueueRef, window time.Duration) (domain.Effect, error) {
	return domain.Effect{Rate: float64(len(ref.Name)), Window: window}, r.err
}

var orders, billing = domain.QueueRef{Vhost: "/", Name: "orders"}, domain.QueueRef{Vhost: "/", Name: "billing-x"}

func TestOneRoundAtATimeEndedOnlyByItsOwnAnswer(t *testing.T) {
	f := New(reader{})
	round := f.Fetch([]domain.QueueRef{orders})
	if round == nil {
		t.Fatal("no round started")
	}
	if f.Fetch([]domain.QueueRef{billing}) != nil {
		t.Fatal("a second round started while the first was running")
	}
	other := New(reader{err: errors.New("other screen")})
	if f.Done(other.Fetch([]domain.QueueRef{orders})().(Msg)) || !f.busy {
		t.Fatal("another fetcher's answer ended the round")
	}
	if !f.Done(round().(Msg)) || f.busy {
		t.Fatal("the round's own answer did not end it")
	}
	if f.Fetch([]domain.QueueRef{billing}) == nil {
		t.Fatal("no round after the first ended")
	}
}

func TestNothingToReadStartsNoRound(t *testing.T) {
	none := New(nil)
	if none.HasInbox(orders) || none.Fetch([]domain.QueueRef{orders}) != nil {
		t.Fatal("a fetcher without a reader reads")
	}
	f := New(reader{})
	if f.Fetch(nil) != nil || f.busy {
		t.Fatal("a round without queues started")
	}
}

func TestAnswersAreThoseOfTheirQueues(t *testing.T) {
	f := New(reader{})
	msg := f.Fetch([]domain.QueueRef{orders, billing})().(Msg)
	for _, ref := range []domain.QueueRef{orders, billing} {
		a, ok := msg.Answer(ref)
		if !ok || a.Effect.Rate != float64(len(ref.Name)) || a.Effect.Window != Window {
			t.Errorf("answer about %s = %+v, %v", ref.Name, a, ok)
		}
	}
	if _, ok := msg.Answer(domain.QueueRef{Vhost: "/", Name: "unasked"}); ok {
		t.Error("an answer about a queue the round did not ask about")
	}
}
