// Package queues is the overview screen: every queue of the broker (or of
// one vhost) with its depth, age, rates, drain estimate and paired DLQ,
// refreshed by a self-scheduling tick.
//
// The tick keeps running while other screens are on top, so the header's
// broker status and each queue's depth history stay current; the root
// delivers non-key messages to every screen on its stack.
package overview

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/effect"
	"github.com/warrenops/warren/ui/components/table"
	"github.com/warrenops/warren/ui/styles"
)

// QueueLister is what the overview needs from the management API.
type QueueLister interface {
	Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error)
}

// Options configure the overview.
type Options struct {
	Lister  QueueLister
	Styles  styles.Styles
	Refresh time.Duration // between the end of one fetch and the next
	Vhost   string        // "" for every vhost
	// Effects reads the inbox figures of queues that have one; nil
	// leaves them out.
	Effects effect.Reader
	// Window is how far back the trouble marks look
	// (trouble.DefaultWindow when not positive).
	Window time.Duration
}

// DefaultRefresh is used when Options.Refresh is not positive.
const DefaultRefresh = 2 * time.Second

// minFetchTimeout bounds one snapshot fetch on a slow or huge broker.
const minFetchTimeout = 15 * time.Second

var lastID atomic.Int64

// Status is what the root shows in its header about the broker.
type Status struct {
	Loaded   bool // at least one snapshot arrived
	Overview domain.Overview
	Nodes    []domain.Node
	TakenAt  time.Time
	StatsAge time.Duration
	// ListedAt is when every queue was last listed; the rows on screen
	// are read more often than that on a large broker (ListEvery apart,
	// at most), the others keep the figures of that list.
	ListedAt  time.Time
	ListEvery time.Duration
	// ByVhost is set when the lists read one vhost at a time: ListedAt
	// is then when the vhost listed longest ago was, ListEvery how often
	// each is.
	ByVhost bool
	// Err is the last fetch's failure, nil once a fetch succeeds again.
	Err error
	// Stopped is true when polling stopped because retrying cannot help
	// (refused credentials); r retries.
	Stopped bool
}

// Model is the overview screen.
type Model struct {
	id      int
	tag     int
	lister  QueueLister
	refresh time.Duration
	st      styles.Styles
	keys    KeyMap

	vhost  string
	vhosts map[string]struct{}
	sortBy SortBy
	filter textinput.Model
	typing bool
	// loading is set from a vhost switch until its first snapshot.
	loading bool
	// inflight is set while a snapshot is being fetched; lastAsked is what
	// the last applied snapshot asked for (see fillRates).
	inflight     bool
	fetchStarted time.Time
	// lastTook is how long the last snapshot of every queue took to come
	// (fetchTimeout, listEvery); listedAt is when it was asked for, and
	// needList asks the next fetch for another.
	lastTook time.Duration
	listedAt time.Time
	needList bool
	// On a broker of several vhosts shown together, lists read one vhost
	// at a time after the first (vhostlist.go): brokerVhosts are the
	// broker's vhosts, vhostCursor the last listed in turn, relist those
	// asked for at once, vhostListedAt when each was last listed.
	brokerVhosts  []string
	vhostCursor   string
	relist        []string
	vhostListedAt map[string]time.Time
	lastAsked     domain.SnapshotOptions
	// awaitingFull is set while no full snapshot has come after a first
	// page was asked for; partialOf is the broker's queue count while
	// only that page is shown, 0 otherwise.
	awaitingFull bool
	partialOf    int
	// pageFromMetrics: the first page's depths came from the broker's
	// Prometheus metrics, not the management API.
	pageFromMetrics bool

	status Status
	rows   []row
	// order is every row in the order sortBy (orderBy) gives, kept until
	// the rows or the order change; view is order filtered.
	order   []int
	orderBy SortBy
	view    []int
	trends  map[domain.QueueRef]*trend
	judge   *trouble.Tracker
	tbl     table.Model
	// cols are the table's columns now, chosen by colSpec.
	cols    []col
	colSpec spec

	inbox   effect.Fetcher
	effects map[domain.QueueRef]effect.Answer

	width, height int
	// clock is the time the polling goes by; tests set their own.
	clock func() time.Time
}

// New returns the overview; Init starts polling.
func New(o Options) *Model {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	fi := textinput.New()
	fi.Prompt = "/"
	fi.Placeholder = "vhost/name"
	fi.CharLimit = 200
	ids, cols := columnsFor(spec{})
	m := &Model{
		id:      int(lastID.Add(1)),
		lister:  o.Lister,
		refresh: o.Refresh,
		st:      o.Styles,
		keys:    DefaultKeyMap(),
		vhost:   o.Vhost,
		vhosts:  map[string]struct{}{},
		filter:  fi,
		trends:  map[domain.QueueRef]*trend{},
		judge:   trouble.New(o.Window),
		tbl:     table.New(cols, o.Styles),
		cols:    ids,
		inbox:   effect.New(o.Effects),
		effects: map[domain.QueueRef]effect.Answer{},
		clock:   time.Now,

		vhostListedAt: map[string]time.Time{},
	}
	if o.Vhost != "" {
		m.vhosts[o.Vhost] = struct{}{}
	}
	return m
}

// Init fetches the first snapshot, after the first page when the lister
// can read one.
func (m *Model) Init() tea.Cmd { return m.firstFetch() }

// Title implements common.Screen.
func (m *Model) Title() string { return "Queues" }

// Keys implements common.Screen.
func (m *Model) Keys() help.KeyMap { return m.keys }

// Capturing implements common.Screen: true while the filter is typed.
func (m *Model) Capturing() bool { return m.typing }

// Status reports the broker's state for the root's header.
func (m *Model) Status() Status { return m.status }

// SetSize implements common.Screen.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.filter.Width = max(width-20, 10)
	m.tbl.SetSize(width, max(height-chromeLines, 1))
}

// Selected returns the queue under the cursor.
func (m *Model) Selected() (domain.Queue, bool) {
	c := m.tbl.Cursor()
	if c < 0 {
		return domain.Queue{}, false
	}
	return m.rows[m.view[c]].q, true
}

// Update implements common.Screen.
func (m *Model) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	if common.Stale(msg, common.Stamp{ID: m.id, Tag: m.tag}) {
		return m, nil
	}
	switch msg := msg.(type) {
	case tickMsg:
		return m, m.fetch()
	case snapshotMsg:
		return m.applySnapshot(msg)
	case firstPageMsg:
		return m, m.applyFirstPage(msg)
	case effect.Msg:
		m.applyEffects(msg)
		return m, nil
	case tea.WindowSizeMsg:
		// The root has resized the table already: rows may have come
		// into view, the first ones too when the snapshot came first.
		return m, m.fillRates(true)
	case tea.KeyMsg:
		if m.typing {
			return m.updateFilter(msg)
		}
		return m.updateKeys(msg)
	}
	return m, nil
}

func (m *Model) updateKeys(msg tea.KeyMsg) (common.Screen, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Open):
		if q, ok := m.Selected(); ok {
			ref := q.Ref()
			return m, func() tea.Msg { return common.OpenQueueMsg{Queue: ref} }
		}
	case key.Matches(msg, m.keys.DLQ):
		return m, m.openDLQ()
	case key.Matches(msg, m.keys.Filter):
		m.typing = true
		return m, m.filter.Focus()
	case key.Matches(msg, m.keys.Clear):
		m.filter.SetValue("")
		m.rearrange()
		return m, m.fillRates(false)
	case key.Matches(msg, m.keys.Sort):
		m.sortBy = (m.sortBy + 1) % sortCount
		m.rearrange()
		if m.sortBy == ByAge {
			m.tag++
			return m, m.fetch()
		}
		return m, m.fillRates(false)
	case key.Matches(msg, m.keys.Vhost):
		m.vhost = m.nextVhost()
		m.rows, m.order, m.view, m.loading = nil, nil, nil, true
		m.relist, m.vhostListedAt, m.listedAt = nil, map[string]time.Time{}, time.Time{}
		// A first page or first list still on its way is left behind.
		m.awaitingFull, m.partialOf = false, 0
		m.tbl.SetLen(0)
		m.fitColumns()
		m.tag++
		return m, m.fetch()
	case key.Matches(msg, m.keys.Refresh):
		m.tag++
		m.askList()
		m.status.Stopped = false
		return m, m.fetch()
	default:
		m.tbl, _ = m.tbl.Update(msg)
		return m, m.fillRates(false)
	}
	return m, nil
}

func (m *Model) updateFilter(msg tea.KeyMsg) (common.Screen, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Apply):
		m.typing = false
		m.filter.Blur()
		return m, nil
	case key.Matches(msg, m.keys.Clear):
		m.typing = false
		m.filter.Blur()
		m.filter.SetValue("")
		m.rearrange()
		return m, m.fillRates(false)
	}
	var cmd tea.Cmd
	before := m.filter.Value()
	m.filter, cmd = m.filter.Update(msg)
	if m.filter.Value() != before {
		m.rearrange()
		return m, tea.Batch(cmd, m.fillRates(false))
	}
	return m, cmd
}

// openDLQ opens the dead letters that belong to the selected row: the row
// itself when it is a DLQ or a parking queue (to release from), else its
// paired DLQ.
func (m *Model) openDLQ() tea.Cmd {
	q, ok := m.Selected()
	if !ok {
		return nil
	}
	switch {
	case q.IsDLQ() || q.Parking:
		ref := q.Ref()
		return func() tea.Msg { return common.OpenDLQMsg{Queue: ref} }
	case q.DLQ != nil:
		ref := *q.DLQ
		return func() tea.Msg { return common.OpenDLQMsg{Queue: ref} }
	case q.RetryTarget != nil:
		back := q.RetryTarget.Name
		return common.ReportError(errors.New("queue " + q.Name + " is a retry queue: its expired messages go back to " + back + ", not to a DLQ; the DLQ of " + back + " holds what finally failed"))
	}
	return common.ReportError(errors.New("queue " + q.Name + " has no dead-letter queue: it sets no x-dead-letter-exchange, or its DLX routes nowhere"))
}

// nextVhost cycles through every vhost seen so far, then back to all.
func (m *Model) nextVhost() string {
	names := make([]string, 0, len(m.vhosts))
	for v := range m.vhosts {
		names = append(names, v)
	}
	sort.Strings(names)
	for i, v := range names {
		if v == m.vhost && i+1 < len(names) {
			return names[i+1]
		}
	}
	if m.vhost == "" && len(names) > 0 {
		return names[0]
	}
	return ""
}

// rearrange re-applies the filter and the order, keeping the cursor on the
// same queue when it is still shown.
func (m *Model) rearrange() {
	selected, ok := m.Selected()
	m.arrange(selected.Ref(), ok)
}

func (m *Model) arrange(keep domain.QueueRef, ok bool) {
	if m.order == nil || m.orderBy != m.sortBy {
		m.order, m.orderBy = sortedOrder(m.rows, m.sortBy), m.sortBy
	}
	m.view = filtered(m.rows, m.order, m.filter.Value())
	m.tbl.SetLen(len(m.view))
	m.fitColumns()
	if !ok {
		return
	}
	for i, r := range m.view {
		if m.rows[r].q.Vhost == keep.Vhost && m.rows[r].q.Name == keep.Name {
			m.tbl.SetCursor(i)
			return
		}
	}
}

// Settings are how the operator arranged the overview: the vhost shown,
// the sort and the filter. A dashboard built again for the same context
// (back from the fleet view) starts as it was left.
type Settings struct {
	Vhost  string
	Sort   SortBy
	Filter string
	// seen is what the overview had watched when it was left: its
	// depth histories and trouble marks.
	seen *seen
}

// seen is an overview's memory of how its queues moved, and when it
// last looked.
type seen struct {
	trends map[domain.QueueRef]*trend
	judge  *trouble.Tracker
	at     time.Time
}

// Settings are the overview's arrangement now, with what it watched.
func (m *Model) Settings() Settings {
	return Settings{Vhost: m.vhost, Sort: m.sortBy, Filter: m.filter.Value(),
		seen: &seen{trends: m.trends, judge: m.judge, at: m.status.TakenAt}}
}

// Forget drops what the overview watched and keeps its arrangement: the
// memory of a context the operator is not coming straight back to.
func (s Settings) Forget() Settings {
	s.seen = nil
	return s
}

// Restore arranges a new overview as s says, before its first read. Back
// within the trouble window of its last snapshot, it goes on with the
// depth histories and marks it had, so a round trip through the fleet
// view does not clear a growing DLQ's mark; after longer, what happened
// meanwhile was not watched, and they start again.
func (m *Model) Restore(s Settings) {
	m.vhost, m.sortBy = s.Vhost, s.Sort%sortCount
	if s.Vhost != "" {
		m.vhosts[s.Vhost] = struct{}{}
	}
	m.filter.SetValue(s.Filter)
	if k := s.seen; k != nil && !k.at.IsZero() && m.clock().Sub(k.at) < k.judge.Window() {
		m.trends, m.judge = k.trends, k.judge
	}
}
