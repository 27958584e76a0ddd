package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/overview"
)

// View implements tea.Model.
func (m Model) View() string {
	if m.width == 0 {
		return ""
	}
	_, h, ok := bodySize(m.width, m.height)
	var body string
	switch {
	case !ok:
		body = m.st.Warn.Render(fmt.Sprintf("terminal too small: warren needs at least %d×%d", minWidth, minHeight))
	case m.showHelp:
		body = m.st.Help.Render(m.fullHelp(m.keyMap()))
	case m.picker.open:
		body = m.pickerView()
	default:
		body = m.top().View()
	}
	last := m.shortHelp()
	if m.command.open {
		last = m.commandView()
	}
	most := footerMaxLines
	if h < 3+footerMaxLines {
		most = 1 // a screen too short keeps its body
	}
	foot := m.footerLines(most)
	parts := []string{m.brokerLine(), m.statusLine(), m.breadcrumb(), fitLines(body, h-(len(foot)-1)), strings.Join(foot, "\n"), last}
	return strings.Join(parts, "\n")
}

// fitLines pads or cuts s to exactly n lines so the footer stays put.
func fitLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// brokerLine names where the operator is: context, environment, the
// guardrails in force, and the broker.
func (m Model) brokerLine() string {
	where := m.st.Header.Render(sanitize.Text(m.o.Context))
	if m.o.NoConfig {
		where = m.st.Warn.Render("no config: " + sanitize.Text(m.o.Context))
	}
	left := []string{m.st.Title.Render("warren"), where}
	for _, ig := range m.o.Ignored {
		left = append(left, m.st.Warn.Render(sanitize.Text(ig)))
	}
	switch env := strings.ToLower(m.o.Environment); env {
	case "prod", "production":
		left = append(left, m.st.Banner.Render("PRODUCTION"))
	case "":
	default:
		left = append(left, m.st.Muted.Render(sanitize.Text(env)))
	}
	if m.o.ReadOnly {
		left = append(left, m.st.Warn.Render("READ-ONLY"))
	}
	if m.o.InsecureTLS {
		left = append(left, m.st.Trouble.Render("TLS NOT VERIFIED"))
	}
	if m.o.Unencrypted {
		left = append(left, m.st.Trouble.Render("UNENCRYPTED"))
	}
	st := m.overview.Status()
	var right string
	if st.Loaded {
		ov := st.Overview
		right = "RabbitMQ " + sanitize.Text(ov.RabbitMQVersion)
		if ov.ClusterName != "" {
			right += " · cluster " + sanitize.Text(ov.ClusterName)
		}
	}
	l, r := strings.Join(left, " "), m.st.Muted.Render(right)
	// Publishers waiting for confirms, where the line has room for them:
	// the status line below is full at 120 columns.
	if c := m.confirmsText(); c != "" {
		if right != "" {
			c += m.st.Muted.Render(" · ")
		}
		if lipgloss.Width(l)+lipgloss.Width(c+r)+1 <= m.width {
			r = c + r
		}
	}
	return m.spread(l, r)
}

// statusLine is the broker's health: nodes, alarms, totals, rates and the
// age of the figures, or why there are none.
func (m Model) statusLine() string {
	st := m.overview.Status()
	if st.Err != nil {
		return m.st.Trouble.Render(ansi.Truncate(m.failure(st), m.width, "…"))
	}
	if !st.Loaded {
		return m.st.Muted.Render("connecting to the management API…")
	}
	ov := st.Overview
	publish, ack := format.Rate(ov.PublishRate), format.Rate(ov.AckRate)
	if ov.RatesUnknown {
		// A first page: the rates come with the first full snapshot.
		publish, ack = format.Unknown, format.Unknown
	}
	nodes := m.nodes(st.Nodes)
	short := nodes
	if via := m.via(ov, true); via != "" {
		// Narrow, where the figures come from goes first: the end of
		// the line is cut.
		nodes += " · " + via
		short = m.via(ov, false) + " · " + short
	}
	messages := fmt.Sprintf("messages %s (ready %s, unacked %s)", format.Count(ov.Totals.Messages), format.Count(ov.Totals.Ready), format.Count(ov.Totals.Unacked))
	rates := fmt.Sprintf("publish %s/s ack %s/s", publish, ack)
	age := m.st.Muted.Render("stats " + format.Duration(m.statsAge(st)) + " old")
	// A narrow terminal gives up the split of the messages, then the
	// rates, before the age of the figures: the one part that says
	// whether the rest can be trusted.
	for _, parts := range [][]string{
		{nodes, messages, rates, age},
		{nodes, "messages " + format.Count(ov.Totals.Messages), rates, age},
		{nodes, "messages " + format.Count(ov.Totals.Messages), age},
		{short, "messages " + format.Count(ov.Totals.Messages), age},
	} {
		if line := strings.Join(parts, " · "); lipgloss.Width(line) <= m.width {
			return line
		}
	}
	// Narrower still: the nodes' part is cut, and the age stays.
	tail := " · " + age
	if w := m.width - lipgloss.Width(tail); w > 0 {
		return ansi.Truncate(short, w, "…") + tail
	}
	return ansi.Truncate(short+tail, m.width, "…")
}

// via says the figures come from a fallback node's management API, and,
// long, that the node the config names first did not answer; "" when
// they do not.
func (m Model) via(ov domain.Overview, long bool) string {
	if ov.Via == "" {
		return ""
	}
	host := func(raw string) string {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			return u.Host + strings.TrimRight(u.Path, "/")
		}
		return raw
	}
	text := "via fallback " + host(ov.Via)
	if ov.Missed != "" && long {
		text += " (" + host(ov.First) + " did not answer)"
	}
	return m.st.Warn.Render(sanitize.Text(text))
}

// failure says why the figures stopped coming, their age first: the
// error can be longer than the line, and on a screen of queues what the
// operator must not miss is that the figures below are old.
func (m Model) failure(st overview.Status) string {
	msg := sanitize.Text(st.Err.Error())
	var text string
	switch {
	case st.Stopped:
		text = "not polling (fix the credentials, then press r)"
	case domain.IsDisconnected(st.Err):
		text = "disconnected, retrying"
	default:
		text = "refresh failed, retrying"
	}
	if st.Loaded {
		text += " · figures below are " + format.Duration(m.statsAge(st)) + " old"
	}
	return text + " · last error: " + msg
}

// statsAge is how old the shown figures are now: the API's own lag when
// the snapshot was taken plus the time since.
func (m Model) statsAge(st overview.Status) time.Duration {
	return st.StatsAge + m.now().Sub(st.TakenAt)
}

// nodes says how many nodes run, names those down, and lists alarms.
func (m Model) nodes(nodes []domain.Node) string {
	var alarms []string
	for _, n := range nodes {
		name := sanitize.Text(n.Name)
		if n.MemAlarm {
			alarms = append(alarms, "memory on "+name)
		}
		if n.DiskAlarm {
			alarms = append(alarms, "disk on "+name)
		}
		if len(n.Partitions) > 0 {
			alarms = append(alarms, "partition on "+name)
		}
	}
	running, down := domain.NodesRunning(nodes)
	up := fmt.Sprintf("nodes %d/%d running", running, len(nodes))
	if len(down) > 0 {
		for i, n := range down {
			down[i] = sanitize.Text(n)
		}
		up = m.st.Trouble.Render(up + " (down: " + strings.Join(down, ", ") + ")")
	}
	if len(alarms) == 0 {
		return up + " · " + m.st.OK.Render("no alarms")
	}
	return up + " · " + m.st.Trouble.Render("ALARM: "+strings.Join(alarms, ", "))
}

func (m Model) breadcrumb() string {
	titles := []string{sanitize.Text(m.overview.Title())}
	for _, s := range m.stack {
		titles = append(titles, sanitize.Text(s.Title()))
	}
	return m.st.Title.Render(ansi.Truncate(strings.Join(titles, " › "), m.width, "…"))
}

// footerMaxLines is how many lines an error or a note may take at the
// foot of the screen, over the last lines of the body while it shows:
// the hint at the end of an error ("start its consumers, or pass
// --rate N") is what the operator needs, and one line cut it off.
const footerMaxLines = 3

// footerLines are the error or note, wrapped, in at most most lines;
// one empty line when there is none.
func (m Model) footerLines(most int) []string {
	if m.footer.text == "" {
		return []string{""}
	}
	// Parts of an error were sanitised where they were made: no escape
	// is made twice, and its lines are kept.
	lines := strings.Split(common.Wrap(sanitize.Message(m.footer.text), m.width), "\n")
	if most <= 1 {
		lines = []string{sanitize.Text(m.footer.text)} // one line: its breaks shown as \n
	} else if len(lines) > most {
		lines = lines[:most]
		lines[most-1] = ansi.Truncate(lines[most-1], max(m.width-1, 1), "") + "…"
	}
	style := m.st.FooterInfo
	if m.footer.isErr {
		style = m.st.FooterError
	}
	for i, l := range lines {
		lines[i] = style.Render(ansi.Truncate(l, m.width, "…"))
	}
	return lines
}

func (m Model) shortHelp() string {
	m.help.ShowAll = false
	return m.help.View(m.keyMap())
}

// pickerKeys are the context switcher's keys, for the help line while
// it is open.
type pickerKeys struct{}

func (pickerKeys) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "choose")),
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "switch")),
		key.NewBinding(key.WithKeys("esc", "C"), key.WithHelp("esc", "stay")),
	}
}

func (p pickerKeys) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// keyMap joins the current screen's keys with the root's; while the
// context switcher is open, its own.
func (m Model) keyMap() help.KeyMap {
	if m.picker.open {
		return pickerKeys{}
	}
	g := m.keys
	g.Back.SetEnabled(len(m.stack) > 0 && !handlesEsc(m.top()))
	g.Channels.SetEnabled(len(m.stack) == 0) // c is the overview's alone
	if m.top().Capturing() {
		// The screen takes every key but ctrl+c: what the root would do
		// with them is not on offer.
		for _, b := range []*key.Binding{&g.Back, &g.Quit, &g.Help, &g.Audit, &g.Channels, &g.Contexts, &g.Command} {
			b.SetEnabled(false)
		}
	}
	return joined{screen: m.top().Keys(), global: g}
}

// fullHelp lays the help's columns out in as many rows as the width
// needs, so that none is cut: the root's keys (audit, contexts, quit)
// come last and must show on a narrow terminal too.
func (m Model) fullHelp(km help.KeyMap) string {
	h := m.help
	h.Width = 0 // rows are fitted here, not cut
	sep := lipgloss.Width(h.FullSeparator)
	var rows []string
	var row [][]key.Binding
	width := 0
	for _, group := range km.FullHelp() {
		w := lipgloss.Width(h.FullHelpView([][]key.Binding{group}))
		if w == 0 {
			continue // every key of the group is off
		}
		if len(row) > 0 && width+sep+w > m.width {
			rows = append(rows, h.FullHelpView(row))
			row, width = nil, 0
		}
		if len(row) > 0 {
			width += sep
		}
		row, width = append(row, group), width+w
	}
	if len(row) > 0 {
		rows = append(rows, h.FullHelpView(row))
	}
	return strings.Join(rows, "\n\n")
}

type joined struct {
	screen, global help.KeyMap
}

func (j joined) ShortHelp() []key.Binding {
	return slices.Concat(j.screen.ShortHelp(), j.global.ShortHelp())
}

func (j joined) FullHelp() [][]key.Binding {
	return slices.Concat(j.screen.FullHelp(), j.global.FullHelp())
}

// spread puts left and right on one line of the terminal's width.
func (m Model) spread(left, right string) string {
	gap := m.width - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 {
		return ansi.Truncate(left, m.width, "…")
	}
	return left + strings.Repeat(" ", gap) + right
}
