package deadletters

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/ui/components/table"
)

// markerWidth holds the cursor (>) and selection (*) marks.
const markerWidth = 2

// table draws the visible messages on screen, rows high.
func (m *Model) table(width, rows int) string {
	held := m.held
	// rows is the height now: the prompt or the filter line may have
	// taken some since the cursor last moved.
	shown := held.list
	shown.SetHeight(rows)
	start, end := shown.Window()
	cols := m.columns()
	body := make([][]string, 0, end-start)
	for i := start; i < end; i++ {
		body = append(body, m.cells(held.letters[held.visible[i]]))
	}
	widths := fit(cols, m.naturalWidths(cols, body), width-markerWidth)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.title
	}
	lines := []string{m.st.TableHeader.Render(pad(strings.Repeat(" ", markerWidth)+row(cols, widths, head), width))}
	if len(held.visible) == 0 {
		msg := "no messages held yet"
		if len(held.letters) > 0 {
			msg = "no held message matches the filter"
		}
		lines = append(lines, m.st.Muted.Render("  "+msg))
	}
	for i := start; i < end; i++ {
		l := held.letters[held.visible[i]]
		mark := []byte("  ")
		if i == shown.Cursor() {
			mark[0] = '>'
		}
		if shown.IsSelected(l.Position) {
			mark[1] = '*'
		}
		line := pad(string(mark)+row(cols, widths, body[i-start]), width)
		switch {
		case i == shown.Cursor():
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

// naturalWidths are each column's widest cell over every message the
// list shows, not only the rows on screen, so that the columns keep
// their place as the operator scrolls; counted again when the listing
// changes, and widened by the rows on screen (an age grows a digit).
func (m *Model) naturalWidths(cols []column, body [][]string) []int {
	c, held := &m.widths, m.held
	if c.version != held.version || len(c.natural) != len(cols) || c.letters != len(held.letters) {
		// A page that came adds its letters to what was counted; any
		// other change (a filter, letters acted on) counts again.
		from := c.letters
		if len(c.natural) != len(cols) || c.filter != held.filterSrc || from > len(held.letters) {
			from, c.natural = 0, make([]int, len(cols))
		}
		start, _ := slices.BinarySearch(held.visible, from)
		for _, i := range held.visible[start:] {
			for j, cell := range m.cells(held.letters[i]) {
				c.natural[j] = max(c.natural[j], ansi.StringWidth(cell))
			}
		}
		c.version, c.letters, c.filter = held.version, len(held.letters), held.filterSrc
	}
	out := slices.Clone(c.natural)
	for _, r := range body {
		for j := range out {
			out[j] = max(out[j], ansi.StringWidth(r[j]))
		}
	}
	return out
}

// widthCache is what naturalWidths counted, and of which listing.
type widthCache struct {
	version, letters int
	filter           string
	natural          []int
}

// fit gives each column its natural width (header or widest cell) and,
// while the total is too wide, takes one cell at a time from the widest
// column that is above its minimum. A whole column keeps its natural
// width: a figure cut short reads as another figure.
func fit(cols []column, natural []int, width int) []int {
	w := make([]int, len(cols))
	least := make([]int, len(cols))
	for i, c := range cols {
		w[i] = max(ansi.StringWidth(c.title), c.min, natural[i])
		least[i] = c.min
		if c.whole {
			least[i] = w[i]
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
			if w[i] > least[i] && (widest < 0 || w[i] > w[widest]) {
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
		cell := cells[i]
		if c.middle {
			cell = cutMiddle(cell, widths[i])
		}
		out[i] = table.Fit(cell, widths[i], c.align)
	}
	return strings.Join(out, " ")
}

// cutMiddle fits s into w cells by cutting its middle: its start and its
// end, where IDs that share a start differ, stay.
func cutMiddle(s string, w int) string {
	n := ansi.StringWidth(s)
	if n <= w || w < 5 {
		return s
	}
	head := (w - 1) / 2
	tail := w - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, n-tail, "")
}

func pad(s string, width int) string {
	s = ansi.Truncate(s, width, "")
	return s + strings.Repeat(" ", max(width-ansi.StringWidth(s), 0))
}
