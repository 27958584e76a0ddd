// Package fleet is the fleet view (`warren fleet`, docs/ARCHITECTURE.md
// §3.6): one row per context of the config — its cluster, version,
// nodes, alarms, queues in trouble, dead letters and their growth, the
// deepest DLQ and the oldest dead letter — read in parallel, each within
// its own timeout, so a context that does not answer is a row that says
// so and holds no other back. enter opens that context's dashboard.
package fleet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/keys"
	"github.com/warrenops/warren/ui/styles"
)

// Reader reads one context; *app.Fleet is one.
type Reader interface {
	Contexts() []string
	// Environment is what the config says of a context, shown while
	// its first read is under way.
	Environment(name string) string
	Read(ctx context.Context, name string) domain.FleetRow
}

// Options configure the view.
type Options struct {
	Reader  Reader
	Refresh time.Duration // between two reads; 5 s at least
	Timeout time.Duration // one context's read
	Styles  styles.Styles
	Now     func() time.Time
	// Current is the context the cursor starts on: the one whose
	// dashboard the operator came back from.
	Current string
	// Back is the context whose dashboard opened the view, which esc
	// goes back to; "" when the view is the first screen.
	Back string
}

// Model is the fleet view. Each context is read on its own cycle: its
// row changes when its broker answers (or its timeout passes), and its
// next read starts a refresh after that, so a context that does not
// answer holds no other row back, at the first read or any after.
type Model struct {
	o       Options
	rows    []domain.FleetRow
	reading []bool
	// gen counts each row's reads: an answer or a tick of an older
	// read than the row's last is dropped.
	gen    []int
	cursor int
	open   string
	now    time.Time
	width  int
	height int
	keys   keyMap
	help   bool // the legend is shown
}

type keyMap struct {
	Up, Down, Open, Back, Refresh, Help, Quit key.Binding
}

// rowMsg is one context's answer.
type rowMsg struct {
	i, gen int
	row    domain.FleetRow
}

// tickMsg starts a context's next read.
type tickMsg struct{ i, gen int }

// New returns the view; Init starts the first read.
func New(o Options) *Model {
	if o.Refresh < 5*time.Second {
		o.Refresh = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Model{o: o, now: o.Now(), keys: keyMap{
		Up: keys.New("up", "up", "k"), Down: keys.New("down", "down", "j"), Open: keys.New("enter", "open its dashboard"),
		Back:    keys.New("esc", "back"),
		Refresh: keys.New("r", "read now"), Help: keys.New("?", "legend"), Quit: keys.New("q", "quit", "ctrl+c"),
	}}
	for i, n := range o.Reader.Contexts() {
		m.rows = append(m.rows, domain.FleetRow{Context: n, Environment: o.Reader.Environment(n)})
		if n == o.Current {
			m.cursor = i
		}
	}
	m.reading, m.gen = make([]bool, len(m.rows)), make([]int, len(m.rows))
	return m
}

// Open is the context whose dashboard the operator chose; "" when the
// view ended otherwise.
func (m *Model) Open() string { return m.open }

// Init reads every context.
func (m *Model) Init() tea.Cmd { return m.readIdle() }

// readIdle reads every context not being read now.
func (m *Model) readIdle() tea.Cmd {
	var cmds []tea.Cmd
	for i := range m.rows {
		if !m.reading[i] {
			cmds = append(cmds, m.read(i))
		}
	}
	return tea.Batch(cmds...)
}

// read reads context i within the timeout.
func (m *Model) read(i int) tea.Cmd {
	m.gen[i]++
	m.reading[i] = true
	gen, name, r, timeout := m.gen[i], m.rows[i].Context, m.o.Reader, m.o.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return rowMsg{i: i, gen: gen, row: r.Read(ctx, name)}
	}
}

// Update handles keys, answers and ticks.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case rowMsg:
		if msg.i >= len(m.rows) || msg.gen != m.gen[msg.i] {
			return m, nil
		}
		m.rows[msg.i], m.reading[msg.i], m.now = msg.row, false, m.o.Now()
		i, gen := msg.i, msg.gen
		return m, tea.Tick(m.o.Refresh, func(time.Time) tea.Msg { return tickMsg{i: i, gen: gen} })
	case tickMsg:
		if msg.i < len(m.rows) && msg.gen == m.gen[msg.i] && !m.reading[msg.i] {
			return m, m.read(msg.i)
		}
	case tea.KeyMsg:
		if split := keys.Split(msg); len(split) > 1 {
			// Keys of one read, one at a time: "jj" then enter opens
			// the row two down, as typed.
			var cmds []tea.Cmd
			for _, k := range split {
				_, cmd := m.Update(k)
				cmds = append(cmds, cmd)
			}
			return m, tea.Batch(cmds...)
		}
		switch {
		case key.Matches(msg, m.keys.Quit):
			return m, tea.Quit
		case key.Matches(msg, m.keys.Up):
			m.cursor = max(m.cursor-1, 0)
		case key.Matches(msg, m.keys.Down):
			m.cursor = min(m.cursor+1, len(m.rows)-1)
		case key.Matches(msg, m.keys.Refresh):
			return m, m.readIdle()
		case key.Matches(msg, m.keys.Help):
			m.help = !m.help
		case key.Matches(msg, m.keys.Back) && m.o.Back != "":
			m.open = m.o.Back
			return m, tea.Quit
		case key.Matches(msg, m.keys.Open):
			if m.cursor < len(m.rows) {
				m.open = m.rows[m.cursor].Context
				return m, tea.Quit
			}
		}
	}
	return m, nil
}

// firstReads reports a context that answered once only: its growth,
// and the marks only a rise shows, are not judged yet.
func (m *Model) firstReads() bool {
	for _, r := range m.rows {
		if r.Err == "" && !r.ReadAt.IsZero() && r.Growth == nil {
			return true
		}
	}
	return false
}

// anyReading reports a read under way.
func (m *Model) anyReading() bool {
	for _, r := range m.reading {
		if r {
			return true
		}
	}
	return false
}

// columns of the table: header, width.
var columns = []struct {
	title string
	width int
}{
	{"CONTEXT", 18}, {"ENV", 8}, {"CLUSTER", 18}, {"VERSION", 8}, {"NODES", 6}, {"TROUBLE", 8}, {"LOOK", 5},
	{"DLQ MSGS", 9}, {"GROWTH", 7}, {"DEEPEST DLQ", 26}, {"OLDEST", 7},
}

// Columns by index, for the widths below.
const (
	contextCol = 0
	envCol     = 1
	clusterCol = 2
	versionCol = 3
	deepestCol = 9
)

// deepestMax is the most the DEEPEST DLQ column takes of what a wide
// terminal leaves over.
const deepestMax = 64

// narrowing is how a terminal too narrow for every column makes room,
// step by step until the table fits: the columns that say least about
// dead letters go first (cluster, version), the deepest DLQ and the
// context's name shrink (the depth and the name's end stay), then the
// environment goes. Dead letters, their growth and the oldest are never
// dropped: they are what the view is for.
var narrowing = []struct {
	col, width int // width 0 drops the column
}{
	{clusterCol, 0}, {versionCol, 0}, {deepestCol, 16}, {contextCol, 12}, {envCol, 0},
}

// widths are the columns' widths on a terminal width wide (0: unknown),
// 0 for a column left out.
func widths(width int) []int {
	out := make([]int, len(columns))
	for i, c := range columns {
		out[i] = c.width
	}
	used := func() int {
		n := 2 - 1 // the cursor's place; a space between two columns
		for _, w := range out {
			if w > 0 {
				n += w + 1
			}
		}
		return n
	}
	if width <= 0 {
		return out
	}
	for _, step := range narrowing {
		if used() <= width {
			break
		}
		out[step.col] = step.width
	}
	if spare := width - used(); spare > 0 {
		out[deepestCol] = min(out[deepestCol]+spare, deepestMax)
	}
	return out
}

// join is the cells of the columns shown, a space between two.
func join(cells []string, w []int) string {
	var parts []string
	for i, c := range cells {
		if w[i] > 0 {
			parts = append(parts, cell(c, w[i]))
		}
	}
	return strings.Join(parts, " ")
}

// deepestCell is the deepest DLQ and its depth in w cells: the depth
// always, and of the name its end, where the queue's name is, when
// the whole does not fit.
func deepestCell(name string, n int64, w int) string {
	count := " " + format.Count(n)
	room := w - ansi.StringWidth(count)
	if ansi.StringWidth(name) > room {
		name = ansi.TruncateLeft(name, ansi.StringWidth(name)-room+1, "…")
	}
	return cell(name+count, w)
}

func cell(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
}

// View draws the table, a row per context.
func (m *Model) View() string {
	st := m.o.Styles
	status := fmt.Sprintf("%s · read in parallel every %s, each within %s", format.Plural(len(m.rows), "context"), format.Duration(m.o.Refresh), format.Duration(m.o.Timeout))
	if m.anyReading() {
		status += " · reading…"
	}
	if m.firstReads() {
		// One read shows no rise: what grows is judged from the next.
		status += " · first read: growth and the trouble it shows come with the next"
	}
	lines := []string{st.Title.Render("warren fleet") + "  " + st.Muted.Render(status)}
	w := widths(m.width)
	head := make([]string, len(columns))
	for i, c := range columns {
		head[i] = c.title
	}
	lines = append(lines, st.Label.Render("  "+join(head, w)))
	for i, r := range m.rows {
		line, tone := m.row(r, w)
		prefix := "  "
		if i == m.cursor {
			prefix = "> "
			line = st.TableSelected.Render(line)
		} else {
			switch tone {
			case format.ActNow:
				line = st.Trouble.Render(line)
			case format.WorthALook:
				line = st.Warn.Render(line)
			}
		}
		lines = append(lines, prefix+line)
	}
	if m.width > 0 {
		for i, l := range lines {
			lines[i] = ansi.Truncate(l, m.width, "…")
		}
	}
	if d := m.detail(); d != "" {
		lines = append(lines, "", d)
	}
	if m.help {
		lines = append(lines, "", st.Muted.Render(common.Wrap(legend(w), m.width)))
	}
	keysLine := "enter opens a dashboard (its C comes back) · r reads now · ? legend · q quits"
	if m.o.Back != "" {
		keysLine = "enter opens a dashboard (its C comes back) · esc back to " + sanitize.Text(m.o.Back) + " · r reads now · ? legend · q quits"
	}
	lines = append(lines, "", st.Muted.Render(keysLine))
	return strings.Join(lines, "\n")
}

// legend says what each column on screen means, and the rows' tone
// (? shows it); a column a narrow terminal dropped is not explained.
func legend(w []int) string {
	var parts []string
	for i, c := range columns {
		if w[i] > 0 {
			parts = append(parts, c.title+": "+meaning[c.title])
		}
	}
	parts = append(parts, "a row's tone is its worst queue's; the selected row's error or alarms are said whole under the table")
	return strings.Join(parts, " · ")
}

// meaning is what each column says.
var meaning = map[string]string{
	"CONTEXT":     "the config's context",
	"ENV":         "its environment",
	"CLUSTER":     "the broker's cluster name",
	"VERSION":     "its RabbitMQ version",
	"NODES":       "running of all",
	"TROUBLE":     "queues to act on now (the dashboard's !)",
	"LOOK":        "queues worth a look (~)",
	"DLQ MSGS":    "dead letters in every DLQ",
	"GROWTH":      "their change since the last read (— on the first)",
	"DEEPEST DLQ": "the DLQ holding most, vhost/name and depth",
	"OLDEST":      "the oldest dead letter's age, where the broker tells it",
}

// detail says in full, wrapped, what the selected row had to cut: why
// its context did not answer (the hint at the error's end is what the
// operator needs) or which alarms its cluster raised.
func (m *Model) detail() string {
	if m.cursor >= len(m.rows) {
		return ""
	}
	r := m.rows[m.cursor]
	var text string
	switch {
	case r.Err != "":
		text = sanitize.Text(r.Context) + " did not answer: " + sanitize.Text(r.Err)
	case len(r.Alarms) > 0:
		text = sanitize.Text(r.Context) + " alarms: " + sanitize.Text(strings.Join(r.Alarms, "; "))
	default:
		return ""
	}
	return m.o.Styles.Trouble.Render(common.Wrap(text, m.width))
}

// row is one context's cells and how urgent it is.
func (m *Model) row(r domain.FleetRow, w []int) (string, format.Level) {
	name := sanitize.Text(r.Context)
	env := sanitize.Text(r.Environment)
	if r.Err != "" {
		return join([]string{name, env}, w[:2]) + " no answer: " + sanitize.Text(r.Err), format.ActNow
	}
	if r.ReadAt.IsZero() {
		return join([]string{name, env}, w[:2]) + " reading…", format.Fine
	}
	nodes := fmt.Sprintf("%d/%d", r.NodesRunning, r.Nodes)
	growth := "—" // unknown: the context's first read
	switch {
	case r.Growth != nil && *r.Growth == 0:
		growth = "0" // measured: steady, which a dash would not tell from unknown
	case r.Growth != nil:
		growth = fmt.Sprintf("%+d", *r.Growth)
	}
	deepest := "—"
	if r.DeepestDLQ != "" {
		deepest = deepestCell(sanitize.Text(r.DeepestDLQ), r.DeepestMessages, w[deepestCol])
	}
	oldest := "—"
	if r.OldestDeadLetter != nil {
		oldest = format.Duration(m.now.Sub(*r.OldestDeadLetter))
	}
	trouble := fmt.Sprint(r.InTrouble)
	if len(r.Alarms) > 0 {
		trouble += " !"
	}
	cells := []string{name, env, sanitize.Text(r.Cluster), sanitize.Text(r.Version), nodes, trouble, fmt.Sprint(r.WorthALook),
		fmt.Sprint(r.DLQMessages), growth, deepest, oldest}
	line := join(cells, w)
	if len(r.Alarms) > 0 {
		line += "  " + sanitize.Text(strings.Join(r.Alarms, "; "))
	}
	tone := format.Fine
	switch {
	case r.InTrouble > 0 || len(r.Alarms) > 0 || r.NodesRunning < r.Nodes:
		tone = format.ActNow
	case r.WorthALook > 0 || r.Growth != nil && *r.Growth > 0:
		tone = format.WorthALook
	}
	return line, tone
}
