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
			limit -= len(wrapIndent)
		}
		plain := ansi.Strip(line)
		// Blanks at the end are padding (a table row's): they never make
		// a line wrap, and what is left of a line once its words are
		// placed is not a line of its own.
		words := ansi.StringWidth(strings.TrimRight(plain, " "))
		if !first && words == 0 {
			return
		}
		if !first {
			b.WriteString(wrapIndent)
		}
		full := ansi.StringWidth(plain)
		if words <= limit {
			if full > limit {
				line = ansi.Cut(line, 0, limit)
			}
			b.WriteString(line)
			return
		}
		end, next := breakAt(plain, limit)
		b.WriteString(ansi.Cut(line, 0, end))
		line = ansi.Cut(line, next, full)
		b.WriteByte('\n')
	}
}

// breakAt is where a line of plain text wider than limit cells breaks:
// at the last run of spaces that starts within the limit, after the
// first word (an indent is no place to break), the next line starting
// past the run; or at the limit when no word ends in time. Each word is
// measured whole, as ansi.Cut counts it, so a character made of several
// code points (an emoji with a modifier, a flag) is one.
func breakAt(plain string, limit int) (end, next int) {
	end, next = limit, limit
	word := false
	cells, from := 0, 0 // the width of plain[:from]
	for i := 0; i < len(plain); i++ {
		if plain[i] != ' ' {
			word = true
			continue
		}
		at := cells + ansi.StringWidth(plain[from:i])
		j := i
		for j < len(plain) && plain[j] == ' ' {
			j++
		}
		cells, from = at+(j-i), j
		if at > limit {
			break
		}
		if word {
			end, next = at, cells
		}
		i = j - 1
	}
	return end, next
}

// JoinFit joins parts with sep into lines of width cells, each part whole
// on one line where it fits: a line goes on, indented, at the part that
// would not fit, not in the middle of one ("stats" and "5s old" apart).
// A part wider than a line is left to Wrap.
func JoinFit(parts []string, sep string, width int) string {
	var b strings.Builder
	used := 0
	end := ansi.StringWidth(strings.TrimRight(sep, " ")) // what ends a line that goes on
	for i, p := range parts {
		w := ansi.StringWidth(p)
		if i < len(parts)-1 {
			w += end
		}
		switch {
		case i == 0:
		case width > 0 && used+ansi.StringWidth(sep)+w > width:
			b.WriteString(strings.TrimRight(sep, " "))
			b.WriteString("\n" + wrapIndent)
			used = len(wrapIndent)
		default:
			b.WriteString(sep)
			used += ansi.StringWidth(sep)
		}
		b.WriteString(p)
		used += ansi.StringWidth(p)
	}
	return b.String()
}
