package overview

import (
	"context"
	"slices"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain/trouble"
)

// FirstPager is what a lister offers when it can read the deepest queues
// quickly: the overview then draws that page while the full snapshot,
// which on a large broker takes seconds, is on its way.
type FirstPager interface {
	FirstPage(ctx context.Context, vhost string, size int) (*domain.Snapshot, error)
}

// firstPageSize covers the table of any common terminal height.
const firstPageSize = 100

// firstPageMsg carries the partial first snapshot.
type firstPageMsg struct {
	common.Stamp
	Snap *domain.Snapshot
	Err  error
}

// firstFetch is the fetch of the first snapshot, preceded by the first
// page when the lister has one and the screen sorts by depth, as the page
// is sorted. The full fetch starts once the page is in (or failed): on a
// large broker both keep its cores busy, and side by side the page came
// as late as the list.
func (m *Model) firstFetch() tea.Cmd {
	fp, ok := m.lister.(FirstPager)
	if !ok || m.sortBy != ByDepth {
		return m.fetch()
	}
	m.awaitingFull = true
	id, tag, vhost := m.id, m.tag, m.vhost
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), minFetchTimeout)
		defer cancel()
		snap, err := fp.FirstPage(ctx, vhost, firstPageSize)
		return firstPageMsg{Stamp: common.Stamp{ID: id, Tag: tag}, Snap: snap, Err: err}
	}
}

// applyFirstPage draws a first page that came before any full snapshot
// and starts the full fetch. Its failure is left to the full fetch to
// report. The page's depths start no trend and no judgement: the full
// snapshot follows within seconds.
//
// Showing every vhost of a broker that has several, the first list reads
// them one at a time as the later lists do (vhostlist.go), the vhosts of
// the page's queues first, each replacing its page rows as it comes: the
// list of every queue is never decoded beside the rows built from it,
// which at 100 000 queues was the dashboard's peak in memory.
func (m *Model) applyFirstPage(msg firstPageMsg) tea.Cmd {
	if !m.awaitingFull {
		return nil
	}
	fetch := func() tea.Cmd {
		if m.inflight {
			return nil
		}
		return m.fetch()
	}
	if msg.Err != nil {
		return fetch()
	}
	snap := msg.Snap
	byVhost := m.vhost == "" && len(snap.Vhosts) > 1 && len(snap.Queues) > 0
	var relist []string
	if byVhost {
		relist = vhostsOfPage(snap.Queues, snap.Vhosts) // from the page's order, deepest first
		// Rows are kept in the lists' order, by vhost then name, so that
		// each vhost's list replaces its rows in place.
		domain.SortQueues(snap.Queues)
	}
	m.status = Status{Loaded: true, Overview: snap.Overview, Nodes: snap.Nodes, TakenAt: snap.TakenAt, StatsAge: snap.StatsAge}
	for _, q := range snap.Queues {
		m.vhosts[q.Vhost] = struct{}{}
	}
	m.partialOf = max(snap.QueueTotal, len(snap.Queues))
	m.pageFromMetrics = snap.FromMetrics
	var room []row
	if byVhost {
		// Room for every queue, so that each vhost's list is spliced in
		// place: growing the slice vhost by vhost would copy it, and
		// near the end hold two copies of every row.
		room = make([]row, 0, m.partialOf+m.partialOf/32+64)
	}
	m.rows, m.order = buildRows(snap, m.vhost, map[domain.QueueRef]*trend{}, trouble.New(m.judge.Window()), m.inbox.HasInbox, room), nil
	if byVhost {
		m.brokerVhosts = slices.Sorted(slices.Values(snap.Vhosts))
		m.relist, m.awaitingFull = relist, false
	}
	selected, hadSelection := m.Selected()
	m.arrange(selected.Ref(), hadSelection)
	return fetch()
}

// vhostsOfPage orders vhosts for the first list: those of the page's
// queues in the page's order (deepest first), then the others.
func vhostsOfPage(page []domain.Queue, vhosts []string) []string {
	var out []string
	for _, q := range page {
		if !slices.Contains(out, q.Vhost) && slices.Contains(vhosts, q.Vhost) {
			out = append(out, q.Vhost)
		}
	}
	for _, vh := range slices.Sorted(slices.Values(vhosts)) {
		if !slices.Contains(out, vh) {
			out = append(out, vh)
		}
	}
	return out
}
