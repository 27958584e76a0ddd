package overview

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/sparkline"
	"github.com/warrenops/warren/ui/components/table"
)

// chromeLines are the overview's lines around the table: the status line
// above it, the legend and the selected row's note below.
const chromeLines = 3

// legend says what the marks and symbols of the table mean.
const legend = "! act now · ~ worth a look · DLQ: its depth, (dlq) a DLQ, (parked) quarantine, ↻ Q retries into Q · " +
	"— none or unknown · OLDEST since published"

// View implements common.Screen: the status line, the table, the legend,
// and the selected row's note on the last line.
func (m *Model) View() string {
	body := m.statusLine() + "\n" + m.tbl.View(m.renderRow)
	if why := m.unanswered(m.height - 2 - (strings.Count(body, "\n") + 2)); why != "" {
		body += "\n\n" + why
	}
	used := strings.Count(body, "\n") + 1
	return body + strings.Repeat("\n", max(m.height-2-used, 0)+1) +
		m.st.Muted.Render(ansi.Truncate(legend, m.width, "…")) + "\n" + m.note()
}

// unanswered is, on a screen with no queue yet, the last failure whole
// and wrapped, in at most room lines: the header has room for one line of
// it, and the hint at its end ("is the management plugin enabled?") is
// what the operator needs.
func (m *Model) unanswered(room int) string {
	if len(m.rows) > 0 || m.status.Err == nil || room < 2 {
		return ""
	}
	lines := strings.Split(common.Wrap("The broker has not answered. Its last error, whole: "+sanitize.Text(m.status.Err.Error()), m.width), "\n")
	if len(lines) > room {
		lines = append(lines[:room-1], ansi.Truncate(lines[room-1], max(m.width-1, 1), "")+"…")
	}
	return m.st.Trouble.Render(strings.Join(lines, "\n"))
}

func (m *Model) statusLine() string {
	return ansi.Truncate(m.statusText(), m.width, "…")
}

func (m *Model) statusText() string {
	if m.typing {
		return m.filter.View()
	}
	vhost := "all"
	if m.vhost != "" {
		vhost = sanitize.Text(m.vhost)
	}
	parts := []string{"vhost: " + vhost, "sort: " + m.sortBy.String()}
	if f := m.filter.Value(); f != "" {
		parts = append(parts, "filter: "+sanitize.Text(f))
	}
	switch {
	case m.partialOf > 0 && m.awaitingFull:
		from := ""
		if m.pageFromMetrics {
			from = " (from metrics)"
		}
		parts = append(parts, fmt.Sprintf("%d deepest shown%s, loading all %d queues…", len(m.view), from, m.partialOf))
	case m.partialOf > 0:
		parts = append(parts, fmt.Sprintf("%d shown, listing the vhosts one by one, %d to go (%d queues in all)…",
			len(m.view), m.unlisted(), m.partialOf))
	default:
		shown := fmt.Sprintf("%d of %s", len(m.view), format.Plural(len(m.rows), "queue"))
		if start, end := m.tbl.Window(); end-start < len(m.view) && end > start {
			// Not every row fits: which ones the screen shows, as a
			// pager says it, short enough for 80 columns.
			shown += fmt.Sprintf(" (%d–%d)", start+1, end)
		}
		parts = append(parts, shown)
	}
	line := strings.Join(parts, "  ·  ")
	listed := m.listedNote()
	if n := m.troubleCount(); n > 0 {
		// First: on a narrow terminal the line is cut at its end, and
		// this is the figure the operator came for.
		return m.st.Trouble.Render(fmt.Sprintf("%d in trouble", n)) + m.st.Muted.Render("  ·  "+line+listed)
	}
	return m.st.Muted.Render(line + listed)
}

// listedNote says, when the rows on screen are read more often than the
// list of every queue (a large broker), how old the figures of the rows
// off screen are.
func (m *Model) listedNote() string {
	st := m.status
	if st.ListEvery <= m.refresh || st.ListedAt.IsZero() || m.partialOf > 0 {
		return ""
	}
	if st.ByVhost {
		return fmt.Sprintf("  ·  one vhost listed at a time, each every %s (oldest %s ago), rows on screen each refresh",
			format.Duration(st.ListEvery), format.Duration(m.clock().Sub(st.ListedAt)))
	}
	return fmt.Sprintf("  ·  list read %s ago (every %s), rows on screen each refresh",
		format.Duration(m.clock().Sub(st.ListedAt)), format.Duration(st.ListEvery))
}

func (m *Model) troubleCount() int {
	n := 0
	for _, i := range m.view {
		if m.rows[i].tone == table.Trouble {
			n++
		}
	}
	return n
}

// note explains the selected row: why it stands out, why a figure is
// unknown, and its whole depth history.
func (m *Model) note() string {
	c := m.tbl.Cursor()
	switch {
	case c < 0 && (m.loading || !m.status.Loaded):
		return m.st.Muted.Render("waiting for the broker…")
	case c < 0 && len(m.rows) > 0:
		return m.st.Muted.Render("no queue matches the filter")
	case c < 0:
		return m.st.Muted.Render("no queues")
	}
	r := m.rows[m.view[c]]
	parts := []string{format.QueueName(r.q.Vhost, r.q.Name)}
	parts = append(parts, r.reasons...)
	if rt := format.RetryNote(r.q); rt != "" {
		parts = append(parts, rt)
	}
	if d := format.DelayedNote(r.q); d != "" {
		parts = append(parts, d)
	}
	if fx := m.effectNote(r); fx != "" {
		parts = append(parts, fx)
	}
	if !r.hasAge {
		parts = append(parts, "oldest age unknown: "+oldestReason(r.q))
	}
	if !r.q.HasRates {
		if m.status.Overview.RatesMode == "none" {
			parts = append(parts, "rates unknown: the broker collects none (rates_mode = none)")
		} else {
			parts = append(parts, "rates not fetched yet")
		}
	}

	// The line says why the row is marked: the depth's sparkline gives
	// way to it, down to its last minute's points, then to nothing.
	depth := r.trend.depth.Values()
	text := strings.Join(parts, " · ")
	var spark string
	for _, n := range []int{len(depth), min(len(depth), noteSparkMin), 0} {
		spark = ""
		if n > 0 {
			spark = "  depth " + sparkline.Render(depth[len(depth)-n:], n)
		}
		if ansi.StringWidth(text)+ansi.StringWidth(spark) <= m.width {
			break
		}
	}
	text = ansi.Truncate(text, max(m.width-ansi.StringWidth(spark), 0), "…")
	style := m.st.Muted
	switch r.tone {
	case table.Trouble:
		style = m.st.Trouble
	case table.Warn:
		style = m.st.Warn
	}
	return style.Render(text) + m.st.Muted.Render(spark)
}

// noteSparkMin is the fewest points of the depth's sparkline the note
// under the cursor keeps beside a long explanation.
const noteSparkMin = 8
