package overview

import (
	"context"
	"errors"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"
)

// fetch asks for a snapshot with the rates of the rows on screen. The
// command copies everything it needs; the model is never touched from the
// command's goroutine.
func (m *Model) fetch() tea.Cmd {
	lister, id, tag := m.lister, m.id, m.tag
	opts := domain.SnapshotOptions{Vhost: m.vhost, RatesFor: m.visibleRefs()}
	switch {
	case m.sortBy == ByAge:
		// Ordering by age needs every queue's head timestamp, which
		// only the heavier all-rates listing has; the other orders
		// need none.
		opts = domain.SnapshotOptions{Vhost: m.vhost, AllRates: true}
	case !m.listDue():
		// With no row on screen (a filter that matches none), only the
		// header is read.
		opts.OnlyRows = true
	case m.byVhost():
		vh := m.nextListed()
		opts = domain.SnapshotOptions{Vhost: vh, RatesFor: refsIn(opts.RatesFor, vh), WithVhosts: true}
	default:
		opts.WithVhosts = m.vhost == ""
	}
	timeout := m.fetchTimeout()
	m.inflight, m.fetchStarted = true, m.clock()
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		snap, err := lister.Snapshot(ctx, opts)
		return snapshotMsg{Stamp: common.Stamp{ID: id, Tag: tag}, Opts: opts, Snap: snap, Err: err}
	}
}

// listDuty is the share of the time the dashboard may keep the broker
// busy listing every queue: the list is read again once ten times what
// the last one took has passed, and meanwhile the rows on screen are
// read one by one at each refresh. A broker of a few hundred queues
// lists them in milliseconds, so it is listed at every refresh; one of
// 10 000 takes a second, so every ten seconds (docs/ARCHITECTURE.md §3.4).
const listDuty = 10

// maxListEvery bounds the time between two lists, whatever they cost.
const maxListEvery = 2 * time.Minute

// listDue reports whether the next fetch reads every queue: none was
// read yet, one is asked for (a queue on screen was deleted or is not
// placed, or r was pressed), or its turn has come.
func (m *Model) listDue() bool {
	if !m.status.Loaded || m.awaitingFull || m.needList || len(m.relist) > 0 || m.listedAt.IsZero() || len(m.rows) == 0 {
		return true
	}
	return m.clock().Sub(m.listedAt) >= m.listEvery()
}

// listEvery is how often every queue is listed: ten times what the last
// list took, at least each refresh and at most maxListEvery. A queue off
// screen keeps the figures and the marks of the last list until the next.
func (m *Model) listEvery() time.Duration {
	limit := maxListEvery
	if m.byVhost() {
		// Each vhost's turn comes at most maxListEvery apart.
		limit /= time.Duration(len(m.brokerVhosts))
	}
	return min(max(listDuty*m.lastTook, m.refresh), limit)
}

// fetchTimeout bounds a fetch: five refreshes, at least minFetchTimeout,
// and at least three times what the last snapshot took, so a broker that
// needs 10 s to list its queues is not cut off at 15 s. Until a snapshot
// has come, how long one takes is unknown: the first gets
// firstFetchTimeout.
func (m *Model) fetchTimeout() time.Duration {
	if m.lastTook == 0 {
		return max(5*m.refresh, firstFetchTimeout)
	}
	return max(5*m.refresh, minFetchTimeout, 3*m.lastTook)
}

// firstFetchTimeout bounds the first fetch, whose cost is not known yet:
// on 100 000 queues it takes several seconds.
const firstFetchTimeout = time.Minute

func (m *Model) tick(after time.Duration) tea.Cmd {
	id, tag := m.id, m.tag
	return tea.Tick(after, func(time.Time) tea.Msg { return tickMsg{Stamp: common.Stamp{ID: id, Tag: tag}} })
}

func (m *Model) applySnapshot(msg snapshotMsg) (common.Screen, tea.Cmd) {
	m.inflight = false
	if msg.Err != nil {
		m.status.Err = msg.Err
		if errors.Is(msg.Err, domain.ErrUnauthorized) {
			m.status.Stopped = true
			return m, nil
		}
		if vh := msg.Opts.Vhost; vh != "" && m.vhost == "" && m.partialOf > 0 && !msg.Opts.OnlyRows &&
			!errors.Is(msg.Err, domain.ErrNotFound) && !slices.Contains(m.relist, vh) {
			// A vhost of the first list failed: its turn comes again
			// after the others, or its rows would stay the page's.
			m.relist = append(m.relist, vh)
		}
		return m, m.tick(m.refresh)
	}
	snap := msg.Snap
	if snap.OnlyRows {
		return m.applyRows(msg)
	}
	if msg.Opts.Vhost != "" && m.vhost == "" {
		return m.applyVhostList(msg)
	}
	m.lastTook = m.clock().Sub(m.fetchStarted)
	m.listedAt, m.needList = m.fetchStarted, false
	// A first page's rows have trends of their own: not reused.
	reuse := m.rows
	if m.partialOf > 0 {
		reuse = nil
	}
	m.loading, m.awaitingFull, m.partialOf = false, false, 0
	m.status = Status{
		Loaded:   true,
		Overview: snap.Overview,
		Nodes:    snap.Nodes,
		TakenAt:  snap.TakenAt,
		StatsAge: snap.StatsAge,
		ListedAt: snap.TakenAt,
	}
	if snap.Vhosts != nil {
		m.brokerVhosts = slices.Sorted(slices.Values(snap.Vhosts))
	}
	clear(m.vhostListedAt)
	m.status.ListEvery = m.listEvery()
	for _, q := range snap.Queues {
		m.vhosts[q.Vhost] = struct{}{}
	}
	selected, hadSelection := m.Selected()
	m.rows = buildRows(snap, msg.Opts.Vhost, m.trends, m.judge, m.inbox.HasInbox, reuse)
	return m, m.settle(selected.Ref(), hadSelection, msg.Opts, false)
}

// settle follows a snapshot that changed the rows: it orders and filters
// them again, keeping the cursor on keep's queue, and schedules what
// comes next: a fetch at once when asked (now) or when rows on screen
// lack rates the fetch did not ask for, else the next tick.
func (m *Model) settle(keep domain.QueueRef, ok bool, asked domain.SnapshotOptions, now bool) tea.Cmd {
	m.order = nil
	m.arrange(keep, ok)
	m.forgetEffects()
	m.lastAsked = asked
	if now || m.missingRates(asked) {
		return tea.Batch(m.fetch(), m.fetchEffects())
	}
	return tea.Batch(m.tick(m.refresh), m.fetchEffects())
}

// applyRows merges a read of the rows on screen into the rows of the
// last list. A queue read that the list did not place, or one on screen
// that the broker no longer has, makes the next fetch list every queue,
// at once when a queue is gone.
func (m *Model) applyRows(msg snapshotMsg) (common.Screen, tea.Cmd) {
	snap := msg.Snap
	m.status = Status{Loaded: true, Overview: snap.Overview, Nodes: snap.Nodes, TakenAt: snap.TakenAt,
		StatsAge: snap.StatsAge, ListedAt: m.status.ListedAt, ListEvery: m.status.ListEvery, ByVhost: m.status.ByVhost}
	if !mergeRows(m.rows, snap, m.trends, m.judge, m.inbox.HasInbox) {
		m.askList()
	}
	if len(snap.Gone) > 0 {
		var vhosts []string
		for _, r := range snap.Gone {
			vhosts = append(vhosts, r.Vhost)
		}
		m.askList(vhosts...)
	}
	selected, hadSelection := m.Selected()
	return m, m.settle(selected.Ref(), hadSelection, msg.Opts, len(snap.Gone) > 0)
}

// fillRates fetches at once when rows now on screen lack rates because
// the last snapshot did not ask for them: they came into view by
// scrolling, filtering, sorting or a resize. A fetch already on its way
// is left to do it: its snapshot asks again for what it missed. Unless
// forced (a resize), it also leaves it to the next tick when the last
// fetch started less than a refresh interval ago, so scrolling through
// a large broker does not fetch back to back. The new fetch replaces the
// pending tick (tag), so polling keeps one pace.
func (m *Model) fillRates(force bool) tea.Cmd {
	if m.inflight || !m.status.Loaded || m.status.Stopped || !m.missingRates(m.lastAsked) {
		return nil
	}
	if !force && m.clock().Sub(m.fetchStarted) < m.refresh {
		return nil
	}
	m.tag++
	return m.fetch()
}

// missingRates reports whether rows now on screen lack rates because the
// fetch did not ask for them (the first fetch, or rows that moved into
// view), in which case fetching again at once fills them in. Rows asked
// for but still without rates are not retried early, so this cannot loop.
func (m *Model) missingRates(asked domain.SnapshotOptions) bool {
	if asked.AllRates {
		return false
	}
	want := make(map[domain.QueueRef]struct{}, len(asked.RatesFor))
	for _, r := range asked.RatesFor {
		want[r] = struct{}{}
	}
	start, end := m.tbl.Window()
	for i := start; i < end; i++ {
		q := m.rows[m.view[i]].q
		if _, ok := want[q.Ref()]; !ok && !q.HasRates {
			return true
		}
	}
	return false
}

func (m *Model) visibleRefs() []domain.QueueRef {
	start, end := m.tbl.Window()
	refs := make([]domain.QueueRef, 0, end-start)
	for i := start; i < end; i++ {
		refs = append(refs, m.rows[m.view[i]].q.Ref())
	}
	return refs
}
