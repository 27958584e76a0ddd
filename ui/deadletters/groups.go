package deadletters

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/table"
	"github.com/warrenops/warren/ui/styles"
)

// groups is the failure groups view, shown in the list's place: the held
// messages, or the whole queue after a scan, counted by how they failed
// (docs/ARCHITECTURE.md §4.12). Enter lists one group's messages.
type groups struct {
	open bool
	// listed is the group whose messages the list shows, filtered to it
	// and selected by enter on its row; "" otherwise. esc goes back from
	// there to the groups, on that group.
	listed, listedSrc string
	tbl               table.Model
	list              []domain.Group
	// from is what list was counted from, so that it is counted again
	// only when that changes.
	from  groupSource
	built bool
}

// groupSource is what a list of groups counts: the held messages as of
// a version of the listing, or a scan's whole queue.
type groupSource struct {
	held  int
	whole *whole
}

func newGroups(st styles.Styles) *groups {
	return &groups{tbl: table.New(groupColumns(nil), st)}
}

// groupColumns are as wide as the groups' words need, up to a bound,
// and the message takes the rest. On a narrow screen the least telling
// go first: when a group first failed, then the convention (most
// queues have one), then the attempts and when it last failed.
func groupColumns(list []domain.Group) []table.Column {
	conv, origin, typ, count := len("CONVENTION"), len("ORIGIN"), len("TYPE"), len("COUNT")
	for _, g := range list {
		conv = max(conv, ansi.StringWidth(sanitize.Text(g.Convention)))
		origin = max(origin, ansi.StringWidth(sanitize.Text(g.Origin)))
		typ = max(typ, ansi.StringWidth(sanitize.Text(g.Type)))
		count = max(count, len(format.Count(int64(g.Count))))
	}
	return []table.Column{
		{Title: "ID", Width: 10},
		{Title: "COUNT", Width: count, Align: table.Right},
		{Title: "CONVENTION", Width: min(conv, 16), Drop: 3},
		{Title: "ORIGIN", Width: min(origin, 24), Min: 6},
		{Title: "TYPE", Width: min(typ, 32), Min: 8},
		{Title: "MESSAGE", Width: 20, Flex: true, Min: 12},
		{Title: "FIRST", Width: ageWidth, Align: table.Right, Drop: 4},
		{Title: "LAST", Width: ageWidth, Align: table.Right, Drop: 1},
		{Title: "ATTEMPTS", Width: len("ATTEMPTS"), Align: table.Right, Drop: 2},
	}
}

// ageWidth holds any age under a hundred thousand days.
var ageWidth = format.DurationWidth(0)

func (g *groups) close() {
	g.open, g.built, g.list = false, false, nil
}

// listing reports that the list shows the group enter listed, under
// the filter enter set: esc then goes back to the groups.
func (m *Model) listingGroup() bool {
	return m.groups.listed != "" && m.held.filterSrc == m.groups.listedSrc
}

// backToGroups undoes what enter on a group did — its filter and its
// selection — and shows the groups again, on that group.
func (m *Model) backToGroups() tea.Cmd {
	id := m.groups.listed
	m.groups.listed, m.groups.listedSrc = "", ""
	m.held.list.ClearSelection()
	m.held.applyFilter("")
	cmd := m.openGroups()
	if i := slices.IndexFunc(m.groups.list, func(x domain.Group) bool { return x.ID == id }); i >= 0 {
		m.groups.tbl.SetCursor(i)
	}
	return cmd
}

func (g *groups) current() (domain.Group, bool) {
	c := g.tbl.Cursor()
	if c < 0 || c >= len(g.list) {
		return domain.Group{}, false
	}
	return g.list[c], true
}

// openGroups shows the failure groups, or says why there are none.
func (m *Model) openGroups() tea.Cmd {
	m.groups.open = true
	m.countGroups()
	if len(m.groups.list) > 0 {
		m.groups.tbl.SetCursor(0)
		return nil
	}
	m.groups.close()
	why := "no messages of " + m.ref.Name + " are held"
	if m.loading {
		why += " yet: a page is loading"
	}
	return common.Info("no failure groups to show: " + why)
}

// countGroups counts the groups of the whole queue when the panel shows
// a scan's figures, else those of the held messages; the cursor stays
// on its group.
func (m *Model) countGroups() {
	g := m.groups
	from := groupSource{held: m.held.version}
	if w := m.scan.whole; m.scan.show && w != nil && w.groups != nil {
		from = groupSource{whole: w}
	}
	if g.built && from == g.from {
		return
	}
	keep, _ := g.current()
	g.from, g.built = from, true
	if from.whole != nil {
		g.list = from.whole.groups
	} else {
		g.list = addGroups(nil, m.held.letters)
	}
	g.tbl.SetColumns(groupColumns(g.list))
	g.tbl.SetLen(len(g.list))
	g.tbl.SetCursor(max(slices.IndexFunc(g.list, func(x domain.Group) bool { return x.ID == keep.ID }), 0))
}

// addGroups counts the letters' failures into groups counted elsewhere
// (by a scan, which cannot see the held messages), largest first.
func addGroups(base []domain.Group, letters []domain.DeadLetter) []domain.Group {
	tally := domain.NewGroups(false)
	for _, l := range letters {
		tally.Add(l.Failure, l.Attempts, l.LogicalID, l.BusinessID())
	}
	if len(base) == 0 {
		return tally.List()
	}
	out := slices.Clone(base)
	for _, h := range tally.List() {
		i := slices.IndexFunc(out, func(g domain.Group) bool { return g.ID == h.ID })
		if i < 0 {
			out = append(out, h)
			continue
		}
		g := &out[i]
		g.Count += h.Count
		g.MinAttempts, g.MaxAttempts = min(g.MinAttempts, h.MinAttempts), max(g.MaxAttempts, h.MaxAttempts)
		if t := h.FirstFailed; !t.IsZero() && (g.FirstFailed.IsZero() || t.Before(g.FirstFailed)) {
			g.FirstFailed = t
		}
		if h.LastFailed.After(g.LastFailed) {
			g.LastFailed = h.LastFailed
		}
	}
	slices.SortStableFunc(out, func(a, b domain.Group) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func (m *Model) groupKeys() help.KeyMap {
	scan := m.keys.Scan
	scan.SetHelp("S", "groups of the whole queue")
	if m.scan.show {
		scan.SetHelp("S", "groups of the held messages")
	}
	scan.SetEnabled(!m.scan.running)
	return groupKeys{nav: m.keys.Nav, show: m.keys.ShowGroup, close: m.keys.CloseGroups, scan: scan}
}

// groupKey handles a key while the groups are shown; the list's keys
// wait until it is back.
func (m *Model) groupKey(k tea.KeyMsg) tea.Cmd {
	g := m.groups
	switch {
	case key.Matches(k, m.keys.CloseGroups):
		g.close()
	case key.Matches(k, m.keys.ShowGroup):
		return m.showGroup()
	case key.Matches(k, m.keys.Scan):
		return m.scan.toggle(m.loading, m.allowRisk)
	default:
		rows := m.groupRows()
		g.tbl.SetSize(m.width, rows+1)
		last := g.tbl.Len() - 1
		if pos, ok := m.keys.Nav.Move(k, g.tbl.Cursor(), max(rows-1, 1), last); ok {
			g.tbl.SetCursor(max(min(pos, last), 0))
		}
	}
	return nil
}

// showGroup lists the group under the cursor: the filter `group == "ID"`
// goes through the filter path, as if typed after /, and the group's
// held messages become the selection, so r and Q act on them and ctrl+r
// and ctrl+q on the whole queue's.
func (m *Model) showGroup() tea.Cmd {
	g, ok := m.groups.current()
	if !ok {
		return nil
	}
	if g.Convention == domain.OtherKey {
		return common.ReportError(errors.New("this row counts together the groups past those warren counts apart; it names no one group to list"))
	}
	src := fmt.Sprintf("group == %q", g.ID)
	before := m.held.filterErr
	m.held.applyFilter(src)
	if m.held.filterSrc != src {
		err := m.held.filterErr
		m.held.filterErr = before
		return common.ReportError(fmt.Errorf("listing group %s of %s failed: %v", g.ID, m.ref.Name, err))
	}
	scanned := m.groups.from.whole != nil
	m.groups.close()
	m.groups.listed, m.groups.listedSrc = g.ID, src
	letGo := m.held.list.SelectedLen()
	for _, i := range m.held.visible {
		if m.held.list.IsSelected(m.held.letters[i].Position) {
			letGo--
		}
	}
	m.held.list.ClearSelection()
	m.held.list.ToggleSelectAll()
	return common.Info(m.groupWords(g, scanned, letGo))
}

// groupWords say what listing a group did: how many of its messages are
// held and selected, and, after a scan, how many the queue holds.
func (m *Model) groupWords(g domain.Group, scanned bool, letGo int) string {
	n := len(m.held.visible)
	id := sanitize.Text(g.ID) // whole: the ID `dlq ... --group` takes
	words := fmt.Sprintf("group %s: %s", id, format.Messages(n))
	if n > 0 {
		words += " selected"
	}
	if scanned && g.Count != n {
		words = fmt.Sprintf("group %s: %s in the queue, %d held", id, format.Messages(g.Count), n)
		if n > 0 {
			words += " and selected"
		}
		if !m.opts.ReadOnly {
			words += fmt.Sprintf("; ctrl+r or ctrl+q acts on all %d", g.Count)
		}
	}
	if letGo > 0 {
		words += fmt.Sprintf(" (%d selected outside the group let go)", letGo)
	}
	return words
}
