package queuedetail

import (
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/effect"
)

// inboxOwner is the queue whose inbox records the effects of this
// queue's messages: the queue itself, or for a DLQ the queue it belongs
// to.
func (m *Model) inboxOwner() (domain.QueueRef, bool) {
	if m.detail == nil {
		return domain.QueueRef{}, false
	}
	q := m.detail.Queue
	refs := append([]domain.QueueRef{q.Ref()}, q.DLQOf...)
	if q.IsDLQ() {
		// Its source's consumer applies the effects: named as its, as
		// the overview shows them on the source's row.
		refs = append(slices.Clone(q.DLQOf), q.Ref())
	}
	for _, ref := range refs {
		if m.inbox.HasInbox(ref) {
			return ref, true
		}
	}
	return domain.QueueRef{}, false
}

// fetchEffect reads the inbox beside the queue, never both at once: a
// slow database delays its own line, not the queue's figures.
func (m *Model) fetchEffect() tea.Cmd {
	owner, ok := m.inboxOwner()
	if !ok {
		return nil
	}
	return m.inbox.Fetch([]domain.QueueRef{owner})
}

func (m *Model) applyEffect(msg effect.Msg) {
	if m.inbox.Done(msg) {
		m.last = msg
		m.render()
	}
}

// effectLine is the inbox's pace, or why it is unknown; empty when the
// queue has no inbox.
func (m *Model) effectLine() string {
	owner, ok := m.inboxOwner()
	if !ok {
		return ""
	}
	label, of := "inbox effects", ""
	switch {
	case owner == m.ref:
	case owner.Vhost == m.ref.Vhost: // the header names the vhost already
		of = " of " + sanitize.Text(owner.Name)
	default:
		of = " of " + format.QueueName(owner.Vhost, owner.Name)
	}
	label += of
	e, ok := m.last.Answer(owner)
	switch {
	case !ok:
		return m.st.Muted.Render(label + ": reading…")
	case e.Err != nil:
		return label + ": " + m.st.Warn.Render("unknown ("+sanitize.Text(e.Err.Error())+")")
	}
	// The overview's words: "inbox effects: 2.0 effects/s" would say it twice.
	return "inbox" + of + ": " + format.Effect(e.Effect)
}
