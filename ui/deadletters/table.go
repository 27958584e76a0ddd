package deadletters

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// markerWidth holds the cursor (>) and selection (*) marks.
const markerWidth = 2

// table draws the visible messages from the scroll offset, rows high.
func (m *Model) table(width, rows int) string {
	cols := m.columns()
	end := min(m.offset+rows, len(m.visible))
	body := make([][]string, 0, end-m.offset)
	for _, i := range m.visible[m.offset:end] {
		body = append(body, m.cells(m.letters[i]))
	}
	widths := fit(cols, body, width-markerWidth)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.title
	}
	lines := []string{m.st.TableHeader.Render(pad(strings.Repeat(" ", markerWidth)+row(cols, widths, head), width))}
	if len(m.visible) == 0 {
		msg := "no messages held yet"
		if len(m.letters) > 0 {
			msg = "no held message matches the filter"
		}
		lines = append(lines, m.st.Muted.Render("  "+msg))
	}
	for n, cells := range body {
		pos := m.offset + n
		l := m.letters[m.visible[pos]]
		mark := []byte("  ")
		if pos == m.cursor {
			mark[0] = '>'
		}
		if m.selected[l.Position] {
			mark[1] = '*'
		}
		line := pad(string(mark)+row(cols, widths, cells), width)
		switch {
		case pos == m.cursor:
			line = m.st.TableSelected.Render(line)
		case l.ReplayCount > 0:
			line = m.st.Warn.Render(line)
		default:
			line = m.st.TableRow.Render(line)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// fit gives each column its natural width (header or widest cell) and,
// while the total is too wide, takes one cell at a time from the widest
// column that is above its minimum.
func fit(cols []column, body [][]string, width int) []int {
	w := make([]int, len(cols))
	for i, c := range cols {
		w[i] = max(ansi.StringWidth(c.title), c.min)
		for _, r := range body {
			w[i] = max(w[i], ansi.StringWidth(r[i]))
		}
	}
	total := func() int {
		t := len(w) - 1
		for _, x := range w {
			t += x
		}
		return t
	}
	for total() > width {
		widest := -1
		for i := range w {
			if w[i] > cols[i].min && (widest < 0 || w[i] > w[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		w[widest]--
	}
	return w
}

func row(cols []column, widths []int, cells []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		s := ansi.Truncate(cells[i], widths[i], "…")
		gap := strings.Repeat(" ", max(widths[i]-ansi.StringWidth(s), 0))
		if c.right {
			out[i] = gap + s
		} else {
			out[i] = s + gap
		}
	}
	return strings.Join(out, " ")
}

func pad(s string, width int) string {
	s = ansi.Truncate(s, width, "")
	return s + strings.Repeat(" ", max(width-ansi.StringWidth(s), 0))
}
