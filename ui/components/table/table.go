// Package table draws a list in fixed columns, with a mark that makes a
// row's tone visible without colors. Like the list under it, it builds
// only the rows on screen: the caller keeps the data and hands the table
// a function that builds row i on demand.
package table

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/ui/components/list"
	"github.com/warrenops/warren/ui/keys"
	"github.com/warrenops/warren/ui/styles"
)

// Align places a cell's text in its column.
type Align int

// Alignments.
const (
	Left Align = iota
	Right
)

// Column is one column. A Flex column takes the width the fixed columns
// leave, never less than its Width. When the table is too narrow, columns
// with a Drop above zero are hidden, highest Drop first, and then columns
// with a Min shrink to it.
type Column struct {
	Title string
	Width int
	Align Align
	Flex  bool
	Drop  int
	// Min is the narrowest the column shrinks to, its cells cut with an
	// ellipsis, when hiding every droppable column still leaves the row
	// wider than the table; 0 never shrinks it.
	Min int
}

// Tone says how a row or a cell should stand out.
type Tone int

// Tones, from quiet to loud.
const (
	Normal Tone = iota
	Muted
	OK
	Warn
	Trouble
)

// Cell is one cell's text (already sanitised) and its tone.
type Cell struct {
	Text string
	Tone Tone
}

// Row is one row. A row's Tone other than Normal overrides its cells'.
type Row struct {
	Cells []Cell
	Tone  Tone
}

// gutter is the two cells before the first column: the cursor and a mark
// that makes a row's tone visible without colors (NO_COLOR, ASCII).
const gutter = 2

// Model is a list drawn in columns: the list keeps the cursor and the
// scroll window, the table the columns and their widths. Tables have no
// selection.
type Model struct {
	list    list.Model[int]
	cols    []Column
	widths  []int
	st      styles.Styles
	width   int
	focused bool
}

// New returns a focused, empty table.
func New(cols []Column, st styles.Styles) Model {
	m := Model{list: list.New[int](keys.DefaultNav(), nil), cols: cols, st: st, focused: true}
	m.widths = m.layout()
	return m
}

// SetColumns replaces the columns, keeping the rows, the cursor and the
// size; the caller's row function must build cells for the new ones.
func (m *Model) SetColumns(cols []Column) {
	m.cols = cols
	m.widths = m.layout()
}

// SetFocused shows or hides the cursor.
func (m *Model) SetFocused(f bool) { m.focused = f }

// SetSize sets the table's width and height, header line included.
func (m *Model) SetSize(width, height int) {
	m.width = width
	m.widths = m.layout()
	m.list.SetHeight(height - 1)
	m.list.Reveal()
}

// SetLen sets the number of rows, keeping the cursor in range.
func (m *Model) SetLen(n int) {
	m.list.SetLen(n)
	m.list.Reveal()
}

// Len is the number of rows.
func (m Model) Len() int { return m.list.Len() }

// Cursor is the selected row, or -1 when the table is empty.
func (m Model) Cursor() int { return m.list.Cursor() }

// SetCursor selects row i and scrolls it into view.
func (m *Model) SetCursor(i int) {
	m.list.SetCursor(i)
	m.list.Reveal()
}

// Window is the range [start, end) of rows on screen.
func (m Model) Window() (start, end int) { return m.list.Window() }

// Nav returns the movement bindings, for the help view.
func (m Model) Nav() keys.Nav { return m.list.Nav() }

// Widths are the columns' widths at the current size; a hidden column's
// is -1.
func (m Model) Widths() []int { return m.widths }

// Shown reports whether the column titled title is on screen at the
// current size.
func (m Model) Shown(title string) bool {
	for i, c := range m.cols {
		if c.Title == title {
			return i < len(m.widths) && m.widths[i] != hidden
		}
	}
	return false
}

// Update moves the cursor; handled is false for keys it does not use.
func (m Model) Update(msg tea.Msg) (Model, bool) {
	var handled bool
	m.list, handled = m.list.Update(msg)
	return m, handled
}

// hidden marks a column dropped because the table is too narrow.
const hidden = -1

// layout gives the fixed columns their widths and the flex columns the
// rest, split evenly. When the columns do not fit, the ones with the
// highest Drop are hidden first.
func (m Model) layout() []int {
	widths := make([]int, len(m.cols))
	used := gutter - 1
	for i, c := range m.cols {
		widths[i] = c.Width
		used += c.Width + 1
	}
	for m.width > 0 && used > m.width {
		drop := -1
		for i, c := range m.cols {
			if widths[i] != hidden && c.Drop > 0 && (drop < 0 || c.Drop > m.cols[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		used -= widths[drop] + 1
		widths[drop] = hidden
	}
	for i, c := range m.cols {
		if over := used - m.width; m.width > 0 && over > 0 && widths[i] != hidden && c.Min > 0 && widths[i] > c.Min {
			cut := min(over, widths[i]-c.Min)
			widths[i] -= cut
			used -= cut
		}
	}
	flex := 0
	for i, c := range m.cols {
		if c.Flex && widths[i] != hidden {
			flex++
		}
	}
	if flex == 0 || m.width <= used {
		return widths
	}
	spare := m.width - used
	for i, c := range m.cols {
		if c.Flex && widths[i] != hidden {
			extra := spare / flex
			widths[i] += extra
			spare -= extra
			flex--
		}
	}
	return widths
}

// View draws the header and the rows on screen; row is called only for
// those rows.
func (m Model) View(row func(i int) Row) string {
	hdr := make([]Cell, len(m.cols))
	for i, c := range m.cols {
		hdr[i] = Cell{Text: c.Title}
	}
	out := strings.Repeat(" ", gutter) + m.st.TableHeader.Render(m.line(hdr, false))
	body := m.list.View(func(i int) string { return m.renderRow(i, row(i)) })
	if body == "" {
		return out
	}
	return out + "\n" + body
}

func (m Model) renderRow(i int, r Row) string {
	selected := m.focused && i == m.list.Cursor()
	mark := [gutter]byte{' ', ' '}
	if selected {
		mark[0] = '>'
	}
	switch r.Tone {
	case Trouble:
		mark[1] = '!'
	case Warn:
		mark[1] = '~'
	}
	if selected {
		return m.st.TableSelected.Render(string(mark[:]) + m.line(r.Cells, false))
	}
	if r.Tone != Normal || !hasTones(r.Cells) {
		return m.tone(r.Tone).Render(string(mark[:]) + m.line(r.Cells, false))
	}
	return string(mark[:]) + m.line(r.Cells, true)
}

func hasTones(cells []Cell) bool {
	for _, c := range cells {
		if c.Tone != Normal {
			return true
		}
	}
	return false
}

// line lays cells out in the columns, each in its own tone when toned,
// else plain for the caller to style the whole line.
func (m Model) line(cells []Cell, toned bool) string {
	var b strings.Builder
	first := true
	for j, w := range m.widths {
		if w == hidden {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		var c Cell
		if j < len(cells) {
			c = cells[j]
		}
		text := Fit(c.Text, w, m.cols[j].Align)
		if toned {
			text = m.tone(c.Tone).Render(text)
		}
		b.WriteString(text)
	}
	return b.String()
}

func (m Model) tone(t Tone) lipgloss.Style {
	switch t {
	case Muted:
		return m.st.Muted
	case OK:
		return m.st.OK
	case Warn:
		return m.st.Warn
	case Trouble:
		return m.st.Trouble
	}
	return m.st.TableRow
}

// Fit truncates s to w cells with an ellipsis, then pads it to w: one
// cell of any table, so every screen cuts and aligns alike.
func Fit(s string, w int, a Align) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	pad := w - ansi.StringWidth(s)
	if pad <= 0 {
		return s
	}
	if a == Right {
		return strings.Repeat(" ", pad) + s
	}
	return s + strings.Repeat(" ", pad)
}
