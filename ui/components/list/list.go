// Package list is the one list every screen scrolls through: a cursor, a
// window of the rows on screen, and a selection. The caller keeps its
// rows and draws them; the list asks for a row only while it is on
// screen, so a list of 100 000 rows costs the same per frame as one of
// 30.
package list

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/ui/keys"
)

// Model is a list of n rows the caller keeps, K naming a row for the
// selection. The selection holds keys, not positions, so a row stays
// selected while a filter hides it or new rows arrive before it.
//
// Moving the cursor (Move, SetCursor, SetLen) keeps it on a row; Reveal
// scrolls it into view, and Update is a move and a Reveal. The two are
// apart for screens whose height depends on the row under the cursor:
// they learn the height after the move and before the scroll.
type Model[K comparable] struct {
	nav      keys.Nav
	key      func(i int) K
	n        int
	cursor   int
	offset   int
	height   int
	overlap  int
	selected map[K]struct{}
}

// New returns an empty list moved by nav. key names row i for the
// selection; a list nobody selects in may pass nil.
func New[K comparable](nav keys.Nav, key func(i int) K) Model[K] {
	return Model[K]{nav: nav, key: key, selected: map[K]struct{}{}}
}

// Nav returns the movement bindings, for the help view.
func (m Model[K]) Nav() keys.Nav { return m.nav }

// SetOverlap sets how many rows of the old page a page step leaves on
// screen, for screens where the operator keeps a row of context.
func (m *Model[K]) SetOverlap(rows int) { m.overlap = rows }

// SetHeight sets how many rows are on screen. It does not scroll: a
// screen whose chrome grows for a while (a prompt, a filter line) draws
// fewer rows below the same top row until the cursor next moves.
func (m *Model[K]) SetHeight(rows int) { m.height = max(rows, 0) }

// Height is how many rows are on screen.
func (m Model[K]) Height() int { return m.height }

// SetLen sets the number of rows, keeping the cursor on one.
func (m *Model[K]) SetLen(n int) {
	m.n = max(n, 0)
	m.keepInRange()
}

// Len is the number of rows.
func (m Model[K]) Len() int { return m.n }

// Cursor is the row under the cursor, or -1 when the list is empty.
func (m Model[K]) Cursor() int {
	if m.n == 0 {
		return -1
	}
	return m.cursor
}

// SetCursor puts the cursor on row i, or the nearest row there is.
func (m *Model[K]) SetCursor(i int) {
	m.cursor = i
	m.keepInRange()
}

// Update moves the cursor for a movement key and scrolls it into view;
// handled is false for any other message.
func (m Model[K]) Update(msg tea.Msg) (Model[K], bool) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !m.Move(k) {
		return m, false
	}
	m.Reveal()
	return m, true
}

// Move applies a movement key to the cursor without scrolling; false
// means k is not one.
func (m *Model[K]) Move(k tea.KeyMsg) bool {
	c, ok := m.nav.Move(k, m.cursor, max(m.height-m.overlap, 1), m.n-1)
	if !ok {
		return false
	}
	m.cursor = c
	m.keepInRange()
	return true
}

// Reveal scrolls as little as it takes to show the cursor, and no
// further down than a full last page.
func (m *Model[K]) Reveal() {
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.height > 0 && m.cursor >= m.offset+m.height {
		m.offset = m.cursor - m.height + 1
	}
	m.offset = max(min(m.offset, m.n-m.height), 0)
}

func (m *Model[K]) keepInRange() { m.cursor = max(min(m.cursor, m.n-1), 0) }

// Window is the range [start, end) of rows on screen.
func (m Model[K]) Window() (start, end int) {
	start = min(m.offset, m.n)
	return start, min(start+m.height, m.n)
}

// View draws the rows on screen, one line each; row is called for those
// rows only.
func (m Model[K]) View(row func(i int) string) string {
	start, end := m.Window()
	var b strings.Builder
	for i := start; i < end; i++ {
		if i > start {
			b.WriteByte('\n')
		}
		b.WriteString(row(i))
	}
	return b.String()
}

// IsSelected reports whether the row named k is selected, shown or not.
func (m Model[K]) IsSelected(k K) bool {
	_, ok := m.selected[k]
	return ok
}

// SelectedLen is how many rows are selected, shown or not.
func (m Model[K]) SelectedLen() int { return len(m.selected) }

// ToggleSelection selects the row under the cursor, or lets it go.
func (m *Model[K]) ToggleSelection() {
	if m.n == 0 || m.key == nil {
		return
	}
	k := m.key(m.cursor)
	if _, ok := m.selected[k]; ok {
		delete(m.selected, k)
		return
	}
	m.selected[k] = struct{}{}
}

// ToggleSelectAll selects every row of the list, or lets them all go when
// every one was selected already; rows hidden from the list keep their
// state. selected says which of the two happened.
func (m *Model[K]) ToggleSelectAll() (selected bool) {
	if m.key == nil {
		return false
	}
	all := m.n > 0
	for i := range m.n {
		if _, ok := m.selected[m.key(i)]; !ok {
			all = false
			break
		}
	}
	for i := range m.n {
		if all {
			delete(m.selected, m.key(i))
		} else {
			m.selected[m.key(i)] = struct{}{}
		}
	}
	return !all
}

// ClearSelection lets every row go.
func (m *Model[K]) ClearSelection() { m.selected = map[K]struct{}{} }
