package deadletters

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/histogram"
	"github.com/warrenops/warren/ui/components/table"
)

// Layout sizes of the screen, in cells.
const (
	sidePanelWidth = 32  // histograms beside the table
	sideBySideMin  = 100 // narrower screens stack the histograms below
	histogramRows  = 5
	minTableRows   = 3
)

// View draws the screen.
func (m *Model) View() string {
	parts := []string{m.header()}
	if mid := m.middle(); mid != "" {
		parts = append(parts, mid)
	}
	if m.groups.open {
		parts = append(parts, m.groupsBody(), m.groupsFooter())
	} else if f := m.footer(); f != "" {
		parts = append(parts, m.body(), f)
	} else {
		parts = append(parts, m.body())
	}
	return lipgloss.JoinVertical(lipgloss.Left, parts...)
}

// middle is the prompt, the planning line or the progress, between the
// header and the table.
func (m *Model) middle() string {
	switch m.mode() {
	case prompting:
		// On a short terminal the question keeps the line where the
		// answer is typed; its details give way first.
		return m.op.prompt.ViewWithin(m.promptRoom())
	case planning:
		if m.op.action == actionExport {
			return m.st.Muted.Render("checking " + sanitize.Text(m.op.exportPath) + "… (esc stops)")
		}
		if m.op.whole {
			return m.st.Muted.Render("reading " + sanitize.Text(m.ref.Name) + " to plan the " + string(m.op.action) + " of " + sanitize.Text(m.wholeWords()) + "… (esc stops; every message goes back)")
		}
		return m.st.Muted.Render("planning the " + string(m.op.action) + " of " + format.Messages(len(m.held.targets())) + "…")
	case running:
		return m.op.progress.View()
	}
	return ""
}

// promptRoom is how many lines a prompt may take: the screen less the
// header, the footer and a row of the table; 0 (no limit) before the
// screen knows its size.
func (m *Model) promptRoom() int {
	if m.height <= 0 {
		return 0
	}
	return max(m.height-lipgloss.Height(m.header())-2, 4)
}

// wrap keeps long lines (notes, errors, results) inside the screen.
func (m *Model) wrap(s string) string {
	if m.width <= 0 {
		return s
	}
	return ansi.Wrap(s, m.width, "")
}

func (m *Model) header() string {
	name := sanitize.Text(m.ref.Name)
	held := fmt.Sprintf("%d held", len(m.held.letters))
	if m.depth > 0 {
		held += fmt.Sprintf(" of %d when opened", m.depth)
	}
	status := []string{"vhost " + sanitize.Text(m.ref.Vhost), held}
	switch {
	case m.loading:
		status = append(status, "loading…")
	case m.end:
		status = append(status, "end of queue (n: what arrived since)")
	case m.state == browsing:
		status = append(status, "n: next page")
	}
	if n := m.held.list.SelectedLen(); n > 0 {
		status = append(status, fmt.Sprintf("%d selected", n))
	}
	if m.opts.ReadOnly {
		status = append(status, "read-only")
	}
	lines := []string{m.st.Title.Render("DLQ "+name) + "  " + m.st.Muted.Render(strings.Join(status, " · "))}
	if m.mode() == prompting {
		// The question states what will happen: it takes the room
		// the screen's notes would.
		return m.wrap(lines[0])
	}
	lines = append(lines, m.stateLines()...)
	if d := m.deadlineLine(); d != "" {
		lines = append(lines, m.st.Muted.Render(sanitize.Text(d)))
	}
	for _, n := range m.notes {
		lines = append(lines, m.st.Warn.Render("! "+sanitize.Text(n)))
	}
	if m.inboxNote != "" {
		lines = append(lines, m.st.Muted.Render(sanitize.Text(m.inboxNote)))
	}
	lines = append(lines, m.scanLines()...)
	lines = append(lines, m.filterLines()...)
	return m.wrap(strings.Join(lines, "\n"))
}

func (m *Model) stateLines() []string {
	switch m.state {
	case opening:
		return []string{m.st.Muted.Render("opening a browse session…")}
	case refused:
		return []string{
			m.st.Trouble.Render("Browsing refused: " + sanitize.Text(m.refusal.Reason)),
			m.st.Warn.Render("If you browse anyway: " + sanitize.Text(m.refusal.Risk)),
			"Press O to browse anyway (you will be asked to confirm), esc to go back.",
		}
	case failed:
		return []string{m.st.Trouble.Render("Browse failed: " + sanitize.Text(errText(m.stateErr)) + " — press R to retry")}
	case lent:
		return []string{m.st.Muted.Render("browse session closed: the " + string(m.op.action) + " works on the whole queue; browsing resumes when it ends")}
	case died:
		return []string{m.st.Trouble.Render("Browse session ended: " + sanitize.Text(errText(m.stateErr)) +
			" — the held messages went back to the queue; rows below are stale; press R to reopen")}
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

func (m *Model) filterLines() []string {
	var out []string
	switch {
	case m.held.typing:
		out = append(out, m.held.input.View())
	case m.held.filter != nil:
		out = append(out, m.st.Label.Render("filter: ")+m.st.Value.Render(sanitize.Text(m.held.filterSrc))+
			m.st.Muted.Render(fmt.Sprintf("  (%d of %d match)", len(m.held.visible), len(m.held.letters))))
	}
	if m.held.filterErr != nil {
		// Its lines are kept: the caret under the fault is on the last.
		out = append(out, m.st.Trouble.Render("filter error: "+sanitize.Message(m.held.filterErr.Error())))
	}
	return out
}

func (m *Model) footer() string {
	if m.mode() == prompting {
		return "" // the question's room (header)
	}
	lines := []string{m.st.Muted.Render("* selected · " + format.HashLegend + " · Q quarantined · ↻n replayed n times before · AGE since dead-lettered")}
	if m.undead() {
		lines = append(lines, m.st.Muted.Render(format.NoDeathLegend))
	}
	if loops := m.loops(); loops > 0 {
		lines = append(lines, m.st.Warn.Render(fmt.Sprintf("↻ %s came back after a replay: find the cause before replaying again", format.Messages(loops))))
	}
	if m.op.result != "" {
		lines = append(lines, m.st.OK.Render(sanitize.Text(m.op.result)))
	}
	// While a resume is planned or runs, its progress says so: the
	// banner offering R waits for its end.
	if h := m.op.halted; h != nil && m.mode() != running && m.mode() != planning {
		lines = append(lines, m.st.Trouble.Render("⏸ replay "+sanitize.Text(h.operation)+" halted "+sanitize.Text(h.reason)+
			": nothing was rolled back, the rest stays here · fix the consumer, then R resumes it (a fresh canary goes first)"))
	}
	return m.wrap(strings.Join(lines, "\n"))
}

// undead reports whether a held message was never dead-lettered by the
// broker, so its REASON cell needs the legend.
func (m *Model) undead() bool {
	for _, l := range m.held.letters {
		if !format.DeadLettered(l) {
			return true
		}
	}
	return false
}

func (m *Model) loops() int {
	n := 0
	for _, l := range m.held.letters {
		if l.ReplayCount > 0 {
			n++
		}
	}
	return n
}

// tableRows is how many message rows fit, the same figure View uses.
func (m *Model) tableRows() int {
	rows, _ := m.layout()
	return rows
}

// layout decides how many table rows fit and whether the histograms go
// below the table on a narrow screen (only while at least minTableRows
// rows remain for the messages).
func (m *Model) layout() (rows int, below bool) {
	used := lipgloss.Height(m.header()) + 1
	if f := m.footer(); f != "" {
		used += lipgloss.Height(f)
	}
	if mid := m.middle(); mid != "" {
		used += lipgloss.Height(mid)
	}
	rows = max(m.height-used, 1)
	if m.width < sideBySideMin {
		if h := lipgloss.Height(m.histogramRow()) + 1; rows-h >= minTableRows {
			return rows - h, true
		}
	}
	return rows, false
}

func (m *Model) body() string {
	rows, below := m.layout()
	if m.width >= sideBySideMin {
		table := m.table(m.width-sidePanelWidth-2, rows)
		summary, hs := m.panel(sidePanelWidth)
		if len(summary) > 0 {
			hs = append([]string{ansi.Wrap(strings.Join(summary, "\n"), sidePanelWidth, "")}, hs...)
		}
		// The panel may not push the footer off the screen.
		side := strings.Split(strings.Join(hs, "\n\n"), "\n")
		side = side[:min(len(side), rows+1)]
		return lipgloss.JoinHorizontal(lipgloss.Top, table, lipgloss.NewStyle().PaddingLeft(2).Render(strings.Join(side, "\n")))
	}
	table := m.table(m.width, rows)
	if !below {
		return table
	}
	return table + "\n\n" + m.histogramRow()
}

// histogramRow puts the three histograms next to each other below the
// table of a narrow screen, under the whole queue's summary if shown.
func (m *Model) histogramRow() string {
	w := max((m.width-4)/3, 10)
	summary, hs := m.panel(w)
	pad := lipgloss.NewStyle().Width(w).MaxWidth(w)
	row := lipgloss.JoinHorizontal(lipgloss.Top, pad.Render(hs[0]), "  ", pad.Render(hs[1]), "  ", pad.Render(hs[2]))
	if len(summary) == 0 {
		return row
	}
	return ansi.Wrap(strings.Join(summary, " · "), m.width, "") + "\n" + row
}

// panel is the summary (whole queue only) and the histograms of
// attempts, reasons and origins: of the shown messages, or of the whole
// queue after a scan.
func (m *Model) panel(width int) ([]string, []string) {
	if w := m.scan.whole; m.scan.show && w != nil {
		of := " (whole queue)"
		return m.wholeSummary(w), []string{
			histogram.Render(m.st, "attempts"+of, histogram.ByKey(w.attempts), width, histogramRows),
			histogram.Render(m.st, "reasons"+of, histogram.ByCount(w.reasons), width, histogramRows),
			histogram.Render(m.st, "origins"+of, histogram.ByCount(w.origins), width, histogramRows),
		}
	}
	attempts, reasons, origins := map[int]int{}, map[string]int{}, map[string]int{}
	for _, i := range m.held.visible {
		l := m.held.letters[i]
		attempts[l.Attempts]++
		reasons[reasonKey(l)]++
		origins[orNone(l.OriginQueue)]++
	}
	of := fmt.Sprintf(" (%d shown)", len(m.held.visible))
	return nil, []string{
		histogram.Render(m.st, "attempts"+of, histogram.ByKey(attempts), width, histogramRows),
		histogram.Render(m.st, "reasons", histogram.ByCount(reasons), width, histogramRows),
		histogram.Render(m.st, "origins", histogram.ByCount(origins), width, histogramRows),
	}
}

// reasonKey and orNone key the held messages' histograms as a scan keys
// the whole queue's, and a message without x-death as its row says.
func reasonKey(l domain.DeadLetter) string {
	if !format.DeadLettered(l) {
		return format.NoDeath
	}
	return orNone(l.Reason)
}

func orNone(s string) string {
	if s == "" {
		return domain.NoneKey
	}
	return s
}

type column struct {
	title string
	min   int
	align table.Align
	// whole columns are never cut: their figures fit, whatever the width.
	whole bool
	// middle columns are cut in the middle: IDs that share a start
	// (ev-orders-0011, ev-orders-0012) differ at the end.
	middle bool
}

func (m *Model) columns() []column {
	cols := []column{
		{title: "LOGICAL ID", min: 8, middle: true}, {title: "MESSAGE ID", min: 6, middle: true}, {title: "REASON", min: 6},
		{title: "ORIGIN", min: 6}, {title: "ATT", min: 3, align: table.Right, whole: true},
		{title: "AGE", min: 3, align: table.Right, whole: true}, {title: "SIZE", min: 4, align: table.Right, whole: true}, {title: "INBOX", min: 7}, {title: "FLAGS", min: 3},
	}
	if m.hasHeadroom() {
		cols = append(cols, column{title: "HEADROOM", min: 4, align: table.Right})
	}
	return cols
}

func (m *Model) hasHeadroom() bool {
	for _, l := range m.held.letters {
		if l.Headroom >= 0 {
			return true
		}
	}
	return false
}

func (m *Model) cells(l domain.DeadLetter) []string {
	var flags []string
	if l.Quarantined {
		flags = append(flags, "Q")
	}
	if l.ReplayCount > 0 {
		flags = append(flags, fmt.Sprintf("↻%d", l.ReplayCount))
	}
	out := []string{
		format.LogicalID(l), sanitize.Text(l.MessageID), format.Reason(l), format.Origin(l),
		fmt.Sprint(l.Attempts), format.Age(m.opts.Now(), l.DeadLetteredAt),
		format.Bytes(int64(l.Size)), m.inboxCell(l), strings.Join(flags, " "),
	}
	if m.hasHeadroom() {
		room := "—"
		if l.Headroom >= 0 {
			room = fmt.Sprint(l.Headroom)
		}
		out = append(out, room)
	}
	return out
}

func (m *Model) inboxCell(l domain.DeadLetter) string {
	st, ok := m.held.inbox[l.LogicalID]
	if ok && st.state == "" {
		return "…"
	}
	return st.label()
}
