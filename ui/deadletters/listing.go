package deadletters

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/list"
)

// listing is the held messages as the operator sees them: what is known
// of each (its inbox status), the filter and the rows it lets through,
// the cursor and the selection.
type listing struct {
	*env
	// rows is the table's height now, which the rest of the screen
	// decides.
	rows    func() int
	letters []domain.DeadLetter
	inbox   map[string]inboxStatus
	visible []int // indexes into letters
	// list runs over visible and selects a row by its Position, so a
	// selection outlives a filter.
	list      list.Model[int]
	filter    ops.Filter
	filterSrc string
	filterErr error
	input     textinput.Model
	typing    bool
	// version counts the refreshes, so what is counted from the letters
	// (the failure groups) is counted again only after a change.
	version int
}

// inboxStatus is one logical ID's inbox state; an empty state means the
// lookup has not answered yet.
type inboxStatus struct {
	state  domain.InboxStatus
	at     time.Time
	detail string
}

func (s inboxStatus) label() string {
	if s.state == "" {
		return string(domain.InboxUnknown)
	}
	return string(s.state)
}

func (s inboxStatus) describe() string {
	switch {
	case s.state == "":
		return "inbox lookup still running"
	case s.state == domain.InboxApplied && !s.at.IsZero():
		return "applied at " + format.Time(s.at)
	case s.state == domain.InboxApplied:
		return "inbox row present (no time column)"
	}
	return s.detail
}

// appliedPtr is the filter's view of the inbox: nil when unknown.
func (s inboxStatus) appliedPtr() *bool { return s.state.Applied() }

func newListing(e *env, rows func() int) *listing {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = `reason == "rejected" && attempts >= 3`
	in.Cursor.SetMode(cursor.CursorStatic)
	l := &listing{env: e, rows: rows, inbox: map[string]inboxStatus{}, input: in}
	l.list = list.New(e.keys.Nav, l.position)
	l.list.SetOverlap(1)
	return l
}

func (l *listing) position(i int) int { return l.letters[l.visible[i]].Position }

// reset holds letters instead of what was held: nothing is selected and,
// for a new session, nothing is known of the inbox.
func (l *listing) reset(letters []domain.DeadLetter, newSession bool) {
	l.letters = letters
	l.list.ClearSelection()
	if newSession {
		l.inbox = map[string]inboxStatus{}
		l.list.SetCursor(0)
	}
	l.refresh()
}

// Update handles the keys of the list: movement, selection and the
// filter; handled is false for the others.
func (l *listing) Update(k tea.KeyMsg) (cmd tea.Cmd, handled bool) {
	if l.typing {
		return l.filterKey(k), true
	}
	if l.navigate(k) {
		return nil, true
	}
	switch {
	case key.Matches(k, l.keys.Select):
		l.list.ToggleSelection()
	case key.Matches(k, l.keys.SelectAll):
		return l.selectAllMatching(), true
	case key.Matches(k, l.keys.Filter):
		l.typing = true
		l.input.SetValue(l.filterSrc)
		l.input.CursorEnd()
		return l.input.Focus(), true
	default:
		return nil, false
	}
	return nil, true
}

// navigate moves the cursor. It is the one thing the list still does
// while an operation holds the keys, so the operator can look around.
func (l *listing) navigate(k tea.KeyMsg) bool {
	l.list.SetHeight(l.rows())
	if !l.list.Move(k) {
		return false
	}
	l.list.Reveal()
	return true
}

// fit scrolls the cursor into the table's height now.
func (l *listing) fit() {
	l.list.SetHeight(l.rows())
	l.list.Reveal()
}

func (l *listing) filterKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, l.keys.Cancel):
		l.typing = false
		l.filterErr = nil
		l.input.Blur()
		l.refresh()
		return nil
	case key.Matches(k, l.keys.Apply):
		return l.applyFilter(strings.TrimSpace(l.input.Value()))
	}
	var cmd tea.Cmd
	l.input, cmd = l.input.Update(k)
	return cmd
}

// applyFilter compiles src; a bad expression keeps the input open with
// the error beside it so the operator can fix it in place.
func (l *listing) applyFilter(src string) tea.Cmd {
	if src == "" {
		l.filter, l.filterSrc, l.filterErr = nil, "", nil
	} else {
		if l.deps.CompileFilter == nil {
			l.filterErr = fmt.Errorf("filters are not available")
			return nil
		}
		f, err := l.deps.CompileFilter(src)
		if err != nil {
			l.filterErr = err
			return nil
		}
		l.filter, l.filterSrc, l.filterErr = f, src, nil
	}
	l.typing = false
	l.input.Blur()
	l.list.SetCursor(0)
	l.refresh()
	return nil
}

// refresh recomputes the visible rows. A filter that fails on a message
// (a type error at run time) hides it and reports the first failure.
func (l *listing) refresh() {
	l.version++
	l.visible = l.visible[:0]
	var runErr error
	now := l.opts.Now()
	for i, d := range l.letters {
		if l.filter != nil {
			ok, err := l.filter.Match(d, l.inbox[d.LogicalID].appliedPtr(), now)
			if err != nil && runErr == nil {
				runErr = fmt.Errorf("on message %s: %w", d.MessageID, err)
			}
			if !ok {
				continue
			}
		}
		l.visible = append(l.visible, i)
	}
	if !l.typing {
		l.filterErr = runErr
	}
	l.list.SetLen(len(l.visible))
	l.fit()
}

// selectAllMatching selects every visible message, or clears them when
// they are all selected already.
func (l *listing) selectAllMatching() tea.Cmd {
	selected := l.list.ToggleSelectAll()
	what := "held messages"
	if l.filter != nil {
		what = "messages matching " + l.filterSrc
	}
	if !selected {
		return common.Info(fmt.Sprintf("cleared the selection of %d %s", len(l.visible), what))
	}
	return common.Info(fmt.Sprintf("selected %d %s", len(l.visible), what))
}

func (l *listing) current() (domain.DeadLetter, bool) {
	c := l.list.Cursor()
	if c < 0 {
		return domain.DeadLetter{}, false
	}
	return l.letters[l.visible[c]], true
}

// targets are the selected messages, or the one under the cursor when
// nothing is selected.
func (l *listing) targets() []domain.DeadLetter {
	var out []domain.DeadLetter
	for _, d := range l.letters {
		if l.list.IsSelected(d.Position) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		if d, ok := l.current(); ok {
			out = append(out, d)
		}
	}
	return out
}
