package overview

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/effect"
	"github.com/warrenops/warren/ui/components/table"
)

// fetchEffects reads the inbox of every row on screen that has one.
func (m *Model) fetchEffects() tea.Cmd {
	var refs []domain.QueueRef
	start, end := m.tbl.Window()
	for i := start; i < end; i++ {
		if r := m.rows[m.view[i]]; r.hasInbox {
			refs = append(refs, r.q.Ref())
		}
	}
	return m.inbox.Fetch(refs)
}

func (m *Model) applyEffects(msg effect.Msg) {
	if !m.inbox.Done(msg) {
		return
	}
	for i, ref := range msg.Refs {
		m.effects[ref] = msg.Answers[i]
	}
	// The LAST column fits the ages these answers brought.
	m.fitColumns()
}

// forgetEffects drops the answers about queues no longer listed, so the
// map stays as small as the broker.
func (m *Model) forgetEffects() {
	if len(m.effects) == 0 {
		return
	}
	listed := make(map[domain.QueueRef]struct{}, len(m.rows))
	for _, r := range m.rows {
		if r.hasInbox {
			listed[r.q.Ref()] = struct{}{}
		}
	}
	for ref := range m.effects {
		if _, ok := listed[ref]; !ok {
			delete(m.effects, ref)
		}
	}
}

// effectCells are the EFF/s and LAST cells: blank without an inbox, "…"
// before the first answer, — when the database did not answer (the
// note below the table says why).
func (m *Model) effectCells(r row) (rate, last table.Cell) {
	if !r.hasInbox {
		return table.Cell{}, table.Cell{}
	}
	e, ok := m.effects[r.q.Ref()]
	switch {
	case !ok:
		return table.Cell{Text: "…", Tone: table.Muted}, table.Cell{Text: "…", Tone: table.Muted}
	case e.Err != nil:
		return table.Cell{Text: format.Unknown, Tone: table.Muted}, table.Cell{Text: format.Unknown, Tone: table.Muted}
	}
	rate = table.Cell{Text: format.Rate(e.Effect.Rate)}
	if age, ok := e.Effect.LastAge(); ok {
		return rate, table.Cell{Text: format.Duration(age)}
	}
	return rate, table.Cell{Text: "never", Tone: table.Muted}
}

// effectNote explains the selected row's inbox figures.
func (m *Model) effectNote(r row) string {
	if !r.hasInbox {
		return ""
	}
	e, ok := m.effects[r.q.Ref()]
	switch {
	case !ok:
		return "reading the inbox…"
	case e.Err != nil:
		return "inbox effects unknown (" + sanitize.Text(e.Err.Error()) + ")"
	}
	return "inbox: " + format.Effect(e.Effect)
}
