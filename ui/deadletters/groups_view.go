package deadletters

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/table"
)

// groupsBody is the heading and the table of the failure groups, in the
// list's place.
func (m *Model) groupsBody() string {
	g := m.groups
	heading := m.groupsHeading()
	if len(g.list) == 0 {
		return heading + "\n" + m.st.Muted.Render("  no messages held: no failure groups to show")
	}
	// The table is sized here as the list is: the filter line or the
	// footer may have taken rows since the cursor last moved.
	t := g.tbl
	t.SetSize(m.width, m.groupRows()+1)
	return heading + "\n" + t.View(func(i int) table.Row { return m.groupRow(g.list[i]) })
}

// groupsHeading says what the groups count: the held messages, or the
// whole queue as the last scan read it.
func (m *Model) groupsHeading() string {
	n := len(m.groups.list)
	count := fmt.Sprintf("%d groups", n)
	if n == 1 {
		count = "1 group"
	}
	of := "of the " + format.Plural(len(m.held.letters), "held message")
	var warn string
	if w := m.groups.from.whole; w != nil {
		of = fmt.Sprintf("of all %s (scan at %s)", format.Messages(w.total), w.at.Format("15:04:05"))
		if !w.complete {
			warn = fmt.Sprintf("incomplete: the scan read %d of the %d ready at the start", w.total-w.held, w.expected)
		}
	}
	line := m.st.Title.Render("Failure groups") + "  " + m.st.Muted.Render(of+" · "+count)
	if warn != "" {
		line += m.st.Muted.Render(" · ") + m.st.Warn.Render(warn)
	}
	return m.wrap(line)
}

func (m *Model) groupsFooter() string {
	var lines []string
	if g, ok := m.groups.current(); ok && g.Convention != domain.OtherKey {
		// The row cuts the type and the message: the selected group's
		// are said whole.
		what := "group " + sanitize.Text(g.ID)
		if g.Type != "" {
			what += " · " + sanitize.Text(g.Type)
		}
		if g.Message != "" {
			what += ": " + sanitize.Text(g.Message)
		}
		lines = append(lines, what)
	}
	// The legend says what the columns on screen mean: a narrow
	// terminal drops the ages first.
	legend := "MESSAGE shows variable parts as <n> <str> <uuid> <hex> <email>"
	t := m.groups.tbl
	t.SetSize(m.width, 1)
	switch first, last := t.Shown("FIRST"), t.Shown("LAST"); {
	case first && last:
		legend += " · FIRST and LAST: ages of the first and last failure"
	case last:
		legend += " · LAST: age of the last failure"
	}
	lines = append(lines, m.st.Muted.Render(legend))
	if m.op.result != "" {
		lines = append(lines, m.st.OK.Render(sanitize.Text(m.op.result)))
	}
	return m.wrap(strings.Join(lines, "\n"))
}

// groupRows is how many groups fit below the heading and the table's
// header.
func (m *Model) groupRows() int {
	used := lipgloss.Height(m.header()) + lipgloss.Height(m.groupsHeading()) + lipgloss.Height(m.groupsFooter()) + 1
	if mid := m.middle(); mid != "" {
		used += lipgloss.Height(mid)
	}
	return max(m.height-used, 1)
}

func (m *Model) groupRow(g domain.Group) table.Row {
	now := m.opts.Now()
	r := table.Row{Cells: []table.Cell{
		{Text: sanitize.Text(g.ID)},
		{Text: format.Count(int64(g.Count))},
		{Text: orNone(sanitize.Text(g.Convention))},
		{Text: orNone(sanitize.Text(g.Origin))},
		{Text: orNone(sanitize.Text(format.ShortType(g.Type)))}, // the full type: the inspector, dlq groups --json
		{Text: orNone(sanitize.Text(g.Message))},
		{Text: format.Age(now, g.FirstFailed)},
		{Text: format.Age(now, g.LastFailed)},
		{Text: attemptSpan(g.MinAttempts, g.MaxAttempts)},
	}}
	if g.Convention == domain.OtherKey {
		r.Tone = table.Muted
	}
	return r
}

// attemptSpan is the fewest and most attempts of a group's messages.
func attemptSpan(least, most int) string {
	if least == most {
		return fmt.Sprint(least)
	}
	return fmt.Sprintf("%d–%d", least, most)
}
