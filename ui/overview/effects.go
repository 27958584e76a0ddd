package overview

import (
	"context"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/components/table"
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

// EffectWindow is the span the effect rate is averaged over.
const EffectWindow = time.Minute

// effectTimeout bounds one round of inbox reads; each read has its own
// shorter statement and connect timeouts below it.
const effectTimeout = 10 * time.Second

// effect is the last answer about one queue's inbox.
type effect struct {
	e   inbox.Effect
	err error
}

// effectsMsg carries the inbox answers for the rows that were on screen.
type effectsMsg struct {
	ID      int
	Refs    []mgmt.QueueRef
	Effects []effect
}

// fetchEffects reads the inbox of every row on screen that has one, all
// at once, unless a round is still running: a slow database then delays
// its own figures, never the snapshot or the keys.
func (m *Model) fetchEffects() tea.Cmd {
	if m.effectReader == nil || m.effectsBusy {
		return nil
	}
	var refs []mgmt.QueueRef
	start, end := m.tbl.Window()
	for i := start; i < end; i++ {
		if r := m.rows[m.view[i]]; r.hasInbox {
			refs = append(refs, r.q.Ref())
		}
	}
	if len(refs) == 0 {
		return nil
	}
	m.effectsBusy = true
	reader, id := m.effectReader, m.id
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), effectTimeout)
		defer cancel()
		out := make([]effect, len(refs))
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Go(func() {
				e, err := reader.Effect(ctx, ref, EffectWindow)
				out[i] = effect{e: e, err: err}
			})
		}
		wg.Wait()
		return effectsMsg{ID: id, Refs: refs, Effects: out}
	}
}

func (m *Model) applyEffects(msg effectsMsg) {
	m.effectsBusy = false
	for i, ref := range msg.Refs {
		m.effects[ref] = msg.Effects[i]
	}
}

// forgetEffects drops the answers about queues no longer listed, so the
// map stays as small as the broker.
func (m *Model) forgetEffects() {
	if len(m.effects) == 0 {
		return
	}
	listed := make(map[mgmt.QueueRef]struct{}, len(m.rows))
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
// before the first answer, "unknown" when the database did not answer.
func (m *Model) effectCells(r row) (rate, last table.Cell) {
	if !r.hasInbox {
		return table.Cell{}, table.Cell{}
	}
	e, ok := m.effects[r.q.Ref()]
	switch {
	case !ok:
		return table.Cell{Text: "…", Tone: table.Muted}, table.Cell{Text: "…", Tone: table.Muted}
	case e.err != nil:
		return table.Cell{Text: "unknown", Tone: table.Muted}, table.Cell{Text: format.Unknown, Tone: table.Muted}
	}
	rate = table.Cell{Text: format.Rate(e.e.Rate)}
	if age, ok := e.e.LastAge(); ok {
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
	case e.err != nil:
		return "inbox effects unknown (" + sanitize.Text(e.err.Error()) + ")"
	}
	return "inbox: " + format.Effect(e.e)
}
