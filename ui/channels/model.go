// Package channels is the channels screen: every AMQP channel with its
// connection, user, confirm mode, unconfirmed publishes, rates, prefetch
// and unacked deliveries, the most unconfirmed first, marked when a
// publisher's pending confirms keep growing (docs/ARCHITECTURE.md §4.9).
package channels

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/table"
	"github.com/warrenops/warren/ui/styles"
)

// Lister is what the screen needs from the management API.
type Lister interface {
	Channels(ctx context.Context, vhost string) (*domain.ChannelList, error)
}

// Options are the screen's settings.
type Options struct {
	Lister  Lister
	Vhost   string // "" for every vhost
	Refresh time.Duration
	Styles  styles.Styles
	Now     func() time.Time
}

// DefaultRefresh is used when Options.Refresh is not positive.
const DefaultRefresh = 2 * time.Second

var lastID atomic.Int64

// chrome is the lines around the table: the summary and a blank line
// above, the filter and the trouble note below.
const chrome = 4

// Model is the channels screen.
type Model struct {
	common.Frame
	o     Options
	st    styles.Styles
	keys  KeyMap
	stamp common.Stamp

	filter textinput.Model
	typing bool

	list    *domain.ChannelList
	err     error
	trend   history
	view    []int // indexes into list.Channels that pass the filter
	tbl     table.Model
	stopped bool
}

// New returns the channels screen; Init starts polling.
func New(o Options) *Model {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	fi := textinput.New()
	fi.Prompt = "/"
	fi.Placeholder = "connection, user, vhost or channel"
	fi.CharLimit = 200
	return &Model{
		o: o, st: o.Styles, keys: DefaultKeyMap(),
		stamp:  common.Stamp{ID: int(lastID.Add(1))},
		filter: fi,
		trend:  history{},
		tbl:    table.New(columns(), o.Styles),
	}
}

func columns() []table.Column {
	return []table.Column{
		{Title: "CONNECTION", Width: 18, Flex: true},
		// The channel's number stays: it tells apart the channels of
		// one connection, whose rows are otherwise alike.
		{Title: "CH", Width: 3, Align: table.Right},
		{Title: "USER", Width: 12, Drop: 2},
		{Title: "VHOST", Width: 12, Drop: 3},
		{Title: "CONFIRM", Width: 7},
		{Title: "UNCONF", Width: 7, Align: table.Right},
		{Title: "PUB/s", Width: 6, Align: table.Right},
		{Title: "CONF/s", Width: 6, Align: table.Right},
		{Title: "ACK/s", Width: 6, Align: table.Right},
		{Title: "PREFETCH", Width: 9, Align: table.Right, Drop: 1},
		{Title: "UNACKED", Width: 7, Align: table.Right},
	}
}

// Init reads the channels.
func (m *Model) Init() tea.Cmd { return m.fetch() }

func (m *Model) fetch() tea.Cmd {
	return fetch(m.o.Lister, m.o.Vhost, m.stamp, max(5*m.o.Refresh, 15*time.Second))
}

// Close stops the polling: late ticks and answers are dropped.
func (m *Model) Close() tea.Cmd {
	m.stamp.Tag = -1
	m.stopped = true
	return nil
}

// Title names the screen in the breadcrumb.
func (m *Model) Title() string { return "Channels" }

// Keys returns the bindings for the help view.
func (m *Model) Keys() help.KeyMap { return m.keys }

// Capturing is true while the filter is typed.
func (m *Model) Capturing() bool { return m.typing }

// SetSize sets the space the screen may draw in.
func (m *Model) SetSize(w, h int) {
	m.Resize(w, h)
	m.filter.Width = max(w-20, 10)
	m.tbl.SetSize(w, max(h-chrome, 2))
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	if m.stopped || common.Stale(msg, m.stamp) {
		return m, nil
	}
	switch msg := msg.(type) {
	case tickMsg:
		return m, m.fetch()
	case listMsg:
		return m, m.apply(msg)
	case tea.KeyMsg:
		if m.typing {
			return m, m.typeFilter(msg)
		}
		switch {
		case key.Matches(msg, m.keys.Filter):
			m.typing = true
			return m, m.filter.Focus()
		case key.Matches(msg, m.keys.Refresh):
			m.stamp.Tag++
			return m, m.fetch()
		}
		m.tbl, _ = m.tbl.Update(msg)
	}
	return m, nil
}

func (m *Model) apply(msg listMsg) tea.Cmd {
	next := tick(m.o.Refresh, m.stamp)
	if msg.Err != nil {
		m.err = msg.Err
		if errors.Is(msg.Err, domain.ErrUnauthorized) {
			// Retrying cannot fix refused credentials; r tries again.
			return common.ReportError(fmt.Errorf("reading channels: %w", msg.Err))
		}
		return next
	}
	m.err = nil
	// The cursor's channel is named from the list the view was built
	// on, before the new one replaces it.
	keep := m.selectedName()
	m.list = msg.List
	m.trend.record(m.list.Channels, m.o.Now())
	m.arrange(keep)
	return next
}

func (m *Model) typeFilter(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Apply):
		m.typing = false
		m.filter.Blur()
		return nil
	case key.Matches(msg, m.keys.Clear):
		m.typing = false
		m.filter.Blur()
		m.filter.SetValue("")
		m.arrange(m.selectedName())
		return nil
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	m.arrange(m.selectedName())
	return cmd
}

// selectedName is the name of the channel under the cursor, "" when
// none is.
func (m *Model) selectedName() string {
	if c := m.tbl.Cursor(); m.list != nil && c >= 0 && c < len(m.view) && m.view[c] < len(m.list.Channels) {
		return m.list.Channels[m.view[c]].Name
	}
	return ""
}

// arrange applies the filter, keeping the cursor on channel keep.
func (m *Model) arrange(keep string) {
	m.view = m.view[:0]
	if m.list == nil {
		m.tbl.SetLen(0)
		return
	}
	f := strings.ToLower(m.filter.Value())
	for i, c := range m.list.Channels {
		if f == "" || matches(c, f) {
			m.view = append(m.view, i)
		}
	}
	m.tbl.SetLen(len(m.view))
	for i, j := range m.view {
		if m.list.Channels[j].Name == keep {
			m.tbl.SetCursor(i)
		}
	}
}

func matches(c domain.ChannelStat, f string) bool {
	for _, s := range []string{c.Connection, c.User, c.Vhost, c.Name} {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return false
}

// View draws the screen.
func (m *Model) View() string {
	lines := []string{m.summary(), ""}
	switch {
	case m.list == nil && m.err == nil:
		lines = append(lines, m.st.Muted.Render("reading channels…"))
	case m.list != nil && m.list.Note != "":
		lines = append(lines, m.st.Warn.Render(ansi.Wrap(sanitize.Text(m.list.Note), m.Width, "")))
	default:
		lines = append(lines, m.tbl.View(m.row))
	}
	if m.typing || m.filter.Value() != "" {
		lines = append(lines, m.filter.View())
	}
	if note := m.troubleNote(); note != "" {
		lines = append(lines, note)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) summary() string {
	title := m.st.Title.Render("Channels")
	if m.o.Vhost != "" {
		title += " " + m.st.Muted.Render("in "+sanitize.Text(m.o.Vhost))
	}
	if m.err != nil {
		what := "refresh failed, retrying: "
		if errors.Is(m.err, domain.ErrUnauthorized) {
			what = "not polling (fix the credentials, then press r): "
		}
		return ansi.Truncate(title+"  "+m.st.Trouble.Render(what+sanitize.Text(m.err.Error())), m.Width, "…")
	}
	if m.list == nil {
		return title
	}
	n, on := m.list.Confirms()
	confirming := 0
	for _, c := range m.list.Channels {
		if c.Confirm != nil && *c.Confirm {
			confirming++
		}
	}
	text := fmt.Sprintf("%s, %d in confirm mode · %s", format.Plural(len(m.list.Channels), "channel"), confirming, format.Confirms(n, on))
	if held := m.heldBack(); held > 0 {
		text += " · " + m.st.Warn.Render(fmt.Sprintf("%d held back by the broker", held))
	}
	if len(m.view) != len(m.list.Channels) {
		text += fmt.Sprintf(" · %d shown", len(m.view))
	}
	return ansi.Truncate(title+"  "+text, m.Width, "…")
}

func (m *Model) row(i int) table.Row {
	c := m.list.Channels[m.view[i]]
	confirm := table.Cell{Text: format.Confirm(c)}
	if c.Confirm == nil || !*c.Confirm {
		confirm.Tone = table.Muted
	}
	unconf := table.Cell{Text: format.Unconfirmed(c)}
	switch {
	case c.Pending() > 0:
		unconf.Tone = table.Warn
	case c.Confirm == nil || !*c.Confirm:
		unconf.Tone = table.Muted
	}
	r := table.Row{Cells: []table.Cell{
		{Text: sanitize.Text(cmp.Or(c.Connection, c.Name))}, {Text: fmt.Sprint(c.Number)}, {Text: sanitize.Text(c.User)},
		{Text: sanitize.Text(c.Vhost)}, confirm, unconf,
		{Text: format.RateOf(c.PublishRate)}, {Text: format.RateOf(c.ConfirmRate)}, {Text: format.RateOf(c.AckRate)},
		{Text: format.Prefetch(c)}, {Text: format.CountOf(c.Unacked)},
	}}
	switch {
	case m.trend.growing(c.Name):
		r.Tone = table.Trouble
	case c.HeldBack() != "":
		r.Tone = table.Warn
	}
	return r
}

// heldBack counts the channels whose connection the broker holds back.
func (m *Model) heldBack() int {
	n := 0
	for _, c := range m.list.Channels {
		if c.HeldBack() != "" {
			n++
		}
	}
	return n
}

// troubleNote says why the row under the cursor is marked: unconfirmed
// publishes that keep growing, or a connection the broker holds back.
func (m *Model) troubleNote() string {
	c := m.tbl.Cursor()
	if m.list == nil || c < 0 || c >= len(m.view) {
		return ""
	}
	ch := m.list.Channels[m.view[c]]
	switch {
	case m.trend.growing(ch.Name):
		return m.st.Trouble.Render(ansi.Truncate("! "+sanitize.Text(ch.Connection)+": unconfirmed publishes keep growing ("+
			format.CountOf(ch.Unconfirmed)+" now): the broker is not confirming as fast as it publishes", m.Width, "…"))
	case ch.Blocked():
		return m.st.Warn.Render(ansi.Truncate("~ "+sanitize.Text(ch.Connection)+": blocked by the broker: a memory or disk alarm "+
			"stops its publishes until it clears (the header names the alarm)", m.Width, "…"))
	case ch.HeldBack() != "":
		return m.st.Warn.Render(ansi.Truncate("~ "+sanitize.Text(ch.Connection)+": in flow control: the broker slows its publishes "+
			"to what its queues take", m.Width, "…"))
	}
	return ""
}
