package deadletters

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/ui/common"
)

func (m *Model) filterKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.Cancel):
		m.mode = normal
		m.filterErr = nil
		m.input.Blur()
		m.refresh()
		return nil
	case key.Matches(k, m.keys.Apply):
		return m.applyFilter(strings.TrimSpace(m.input.Value()))
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

// applyFilter compiles src; a bad expression keeps the input open with
// the error beside it so the operator can fix it in place.
func (m *Model) applyFilter(src string) tea.Cmd {
	if src == "" {
		m.filter, m.filterSrc, m.filterErr = nil, "", nil
	} else {
		if m.deps.CompileFilter == nil {
			m.filterErr = fmt.Errorf("filters are not available")
			return nil
		}
		f, err := m.deps.CompileFilter(src)
		if err != nil {
			m.filterErr = err
			return nil
		}
		m.filter, m.filterSrc, m.filterErr = f, src, nil
	}
	m.mode = normal
	m.input.Blur()
	m.cursor, m.offset = 0, 0
	m.refresh()
	return nil
}

// refresh recomputes the visible rows. A filter that fails on a message
// (a type error at run time) hides it and reports the first failure.
func (m *Model) refresh() {
	m.visible = m.visible[:0]
	var runErr error
	now := m.opts.Now()
	for i, l := range m.letters {
		if m.filter != nil {
			ok, err := m.filter.Match(l, m.inbox[l.LogicalID].appliedPtr(), now)
			if err != nil && runErr == nil {
				runErr = fmt.Errorf("on message %s: %w", l.MessageID, err)
			}
			if !ok {
				continue
			}
		}
		m.visible = append(m.visible, i)
	}
	if m.mode != filtering {
		m.filterErr = runErr
	}
	m.clampCursor()
}

// selectAllMatching selects every visible message, or clears them when
// they are all selected already.
func (m *Model) selectAllMatching() tea.Cmd {
	all := len(m.visible) > 0
	for _, i := range m.visible {
		if !m.selected[m.letters[i].Position] {
			all = false
			break
		}
	}
	for _, i := range m.visible {
		if all {
			delete(m.selected, m.letters[i].Position)
		} else {
			m.selected[m.letters[i].Position] = true
		}
	}
	what := "held messages"
	if m.filter != nil {
		what = "messages matching " + m.filterSrc
	}
	if all {
		return common.Info(fmt.Sprintf("cleared the selection of %d %s", len(m.visible), what))
	}
	return common.Info(fmt.Sprintf("selected %d %s", len(m.visible), what))
}
