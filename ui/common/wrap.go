package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// wrapIndent starts each line a wrapped line goes on to.
const wrapIndent = "  "

// Wrap fits each line of s into width cells: a longer line is broken at
// its last space that fits and goes on, indented, on the next. It never
// breaks inside a word (a queue name broken at its hyphen reads as two
// names); a word wider than the whole line is cut at the edge. Styles
// carry over. Below a few cells nothing is wrapped.
func Wrap(s string, width int) string {
	if width < 2*len(wrapIndent)+4 {
		return s
	}
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		wrapLine(&b, line, width)
	}
	return b.String()
}

func wrapLine(b *strings.Builder, line string, width int) {
	for first := true; ; first = false {
		limit := width
		if !first {
			b.WriteString(wrapIndent)
			limit -= len(wrapIndent)
		}
		w := ansi.StringWidth(line)
		if w <= limit {
			b.WriteString(line)
			return
		}
		// The last space at or before the limit: what comes before it
		// fits.
		at, cell := -1, 0
		for _, r := range ansi.Strip(line) {
			if cell > limit {
				break
			}
			if r == ' ' && cell > 0 {
				at = cell
			}
			cell += ansi.StringWidth(string(r))
		}
		if at < 0 {
			b.WriteString(ansi.Cut(line, 0, limit))
			line = ansi.Cut(line, limit, w)
		} else {
			b.WriteString(ansi.Cut(line, 0, at))
			line = ansi.Cut(line, at+1, w)
		}
		b.WriteByte('\n')
	}
}
