// Package histogram draws counts as horizontal bars, one labelled row per
// bucket, scaled to the width it is given.
package histogram

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/styles"
)

// Bar is one bucket. Label is untrusted text (a reason, a queue name): the
// histogram sanitises it when drawing.
type Bar struct {
	Label string
	Count int
}

// ByCount turns counts into bars, largest first, ties by label, so the
// order is stable from one render to the next.
func ByCount(counts map[string]int) []Bar {
	bars := make([]Bar, 0, len(counts))
	for l, c := range counts {
		bars = append(bars, Bar{Label: l, Count: c})
	}
	sort.Slice(bars, func(i, j int) bool {
		if bars[i].Count != bars[j].Count {
			return bars[i].Count > bars[j].Count
		}
		return bars[i].Label < bars[j].Label
	})
	return bars
}

// ByKey turns integer-keyed counts (attempts) into bars in key order.
func ByKey(counts map[int]int) []Bar {
	keys := make([]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	bars := make([]Bar, 0, len(keys))
	for _, k := range keys {
		bars = append(bars, Bar{Label: strconv.Itoa(k), Count: counts[k]})
	}
	return bars
}

// labelWidth caps the label column so the bars keep most of the space.
const labelWidth = 14

// Render draws title and at most maxRows bars in width columns. Buckets
// beyond maxRows are folded into one "other" bar, so the total stays true.
func Render(st styles.Styles, title string, bars []Bar, width, maxRows int) string {
	var b strings.Builder
	b.WriteString(st.Title.Render(title))
	if len(bars) == 0 {
		b.WriteString("\n" + st.Muted.Render("  (none)"))
		return b.String()
	}
	bars = fold(bars, maxRows)
	lw, nw, maxCount := 0, 0, 0
	for _, bar := range bars {
		lw = max(lw, ansi.StringWidth(sanitize.Text(bar.Label)))
		nw = max(nw, len(strconv.Itoa(bar.Count)))
		maxCount = max(maxCount, bar.Count)
	}
	lw = min(lw, labelWidth)
	room := max(width-lw-nw-2, 1)
	for _, bar := range bars {
		label := ansi.Truncate(sanitize.Text(bar.Label), lw, "…")
		n := 0
		if maxCount > 0 {
			n = bar.Count * room / maxCount
		}
		if n == 0 && bar.Count > 0 {
			n = 1
		}
		fmt.Fprintf(&b, "\n%s %s %s",
			st.Label.Render(padRight(label, lw)),
			st.Value.Render(fmt.Sprintf("%*d", nw, bar.Count)),
			st.OK.Render(strings.Repeat("█", n)))
	}
	return b.String()
}

func fold(bars []Bar, maxRows int) []Bar {
	if maxRows < 2 || len(bars) <= maxRows {
		return bars
	}
	out := append([]Bar(nil), bars[:maxRows-1]...)
	rest := 0
	for _, bar := range bars[maxRows-1:] {
		rest += bar.Count
	}
	return append(out, Bar{Label: fmt.Sprintf("other (%d)", len(bars)-maxRows+1), Count: rest})
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
}
