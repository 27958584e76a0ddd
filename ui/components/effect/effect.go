// Package effect reads the pace of queues' inboxes for the screens that
// show it (docs/ARCHITECTURE.md §4.1), one round at a time, so a slow
// database delays only its own figures, never the broker's or the keys.
package effect

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
)

// Reader reads the pace of a queue's inbox (docs/ARCHITECTURE.md §4.1:
// effect rate and last effect age, from the inbox table's time column).
type Reader interface {
	// HasInbox reports, without I/O, whether the config gives the queue
	// an inbox.
	HasInbox(ref domain.QueueRef) bool
	Effect(ctx context.Context, ref domain.QueueRef, window time.Duration) (domain.Effect, error)
}

// Window is the span the effect rate is averaged over.
const Window = time.Minute

// timeout bounds one round of inbox reads; each read has its own shorter
// statement and connect timeouts below it.
const timeout = 10 * time.Second

// Answer is what the inbox said about one queue.
type Answer struct {
	Effect domain.Effect
	Err    error
}

// Msg carries one round's answers back to the Fetcher that asked.
type Msg struct {
	id      int
	Refs    []domain.QueueRef
	Answers []Answer
}

// Answer returns the answer about ref, if the round asked about it.
func (msg Msg) Answer(ref domain.QueueRef) (Answer, bool) {
	for i, r := range msg.Refs {
		if r == ref {
			return msg.Answers[i], true
		}
	}
	return Answer{}, false
}

// Fetchers are numbered from one counter, whatever screen holds them, as
// every screen sees every answer.
var lastID atomic.Int64

// Fetcher reads inboxes for one screen, a round at a time.
type Fetcher struct {
	r    Reader
	id   int
	busy bool
}

// New returns a fetcher reading r; a nil r has no inbox to read.
func New(r Reader) Fetcher {
	return Fetcher{r: r, id: int(lastID.Add(1))}
}

// HasInbox reports, without I/O, whether the queue has an inbox.
func (f *Fetcher) HasInbox(ref domain.QueueRef) bool {
	return f.r != nil && f.r.HasInbox(ref)
}

// Fetch reads the inboxes of refs all at once, unless a round is still
// running. The command copies what it needs.
func (f *Fetcher) Fetch(refs []domain.QueueRef) tea.Cmd {
	if f.r == nil || f.busy || len(refs) == 0 {
		return nil
	}
	f.busy = true
	r, id := f.r, f.id
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out := make([]Answer, len(refs))
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Go(func() {
				e, err := r.Effect(ctx, ref, Window)
				out[i] = Answer{Effect: e, Err: err}
			})
		}
		wg.Wait()
		return Msg{id: id, Refs: refs, Answers: out}
	}
}

// Done reports whether msg answers this fetcher's round, which lets the
// next round start.
func (f *Fetcher) Done(msg Msg) bool {
	if msg.id != f.id {
		return false
	}
	f.busy = false
	return true
}
