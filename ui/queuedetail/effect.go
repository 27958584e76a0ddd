package queuedetail

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/format"
	"github.com/warrenops/warren/ui/sanitize"
)

// EffectReader reads the pace of a queue's inbox (docs/ARCHITECTURE.md §4.1: effect
// rate and last effect age, from the inbox table's time column).
type EffectReader interface {
	// HasInbox reports, without I/O, whether the config gives the queue
	// an inbox.
	HasInbox(ref mgmt.QueueRef) bool
	Effect(ctx context.Context, ref mgmt.QueueRef, window time.Duration) (inbox.Effect, error)
}

const (
	effectWindow  = time.Minute
	effectTimeout = 10 * time.Second
)

// effectMsg carries the inbox's answer back to the screen that asked.
type effectMsg struct {
	ID     int
	Owner  mgmt.QueueRef
	Effect inbox.Effect
	Err    error
}

// inboxOwner is the queue whose inbox records the effects of this
// queue's messages: the queue itself, or for a DLQ the queue it belongs
// to.
func (m *Model) inboxOwner() (mgmt.QueueRef, bool) {
	if m.effects == nil || m.detail == nil {
		return mgmt.QueueRef{}, false
	}
	q := m.detail.Queue
	for _, ref := range append([]mgmt.QueueRef{q.Ref()}, q.DLQOf...) {
		if m.effects.HasInbox(ref) {
			return ref, true
		}
	}
	return mgmt.QueueRef{}, false
}

// fetchEffect reads the inbox beside the queue, never both at once: a
// slow database delays its own line, not the queue's figures.
func (m *Model) fetchEffect() tea.Cmd {
	owner, ok := m.inboxOwner()
	if !ok || m.effectBusy {
		return nil
	}
	m.effectBusy = true
	reader, id := m.effects, m.id
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), effectTimeout)
		defer cancel()
		e, err := reader.Effect(ctx, owner, effectWindow)
		return effectMsg{ID: id, Owner: owner, Effect: e, Err: err}
	}
}

func (m *Model) applyEffect(msg effectMsg) {
	m.effectBusy = false
	m.effect = &msg
	m.render()
}

// effectLine is the inbox's pace, or why it is unknown; empty when the
// queue has no inbox.
func (m *Model) effectLine() string {
	owner, ok := m.inboxOwner()
	if !ok {
		return ""
	}
	label, of := "inbox effects", ""
	if owner != m.ref {
		of = " (of " + format.QueueName(owner.Vhost, owner.Name) + ")"
	}
	label += of
	e := m.effect
	switch {
	case e == nil || e.Owner != owner:
		return m.st.Muted.Render(label + ": reading…")
	case e.Err != nil:
		return label + ": " + m.st.Warn.Render("unknown ("+sanitize.Text(e.Err.Error())+")")
	}
	// The overview's words: "inbox effects: 2.0 effects/s" would say it twice.
	return "inbox" + of + ": " + format.Effect(e.Effect)
}
