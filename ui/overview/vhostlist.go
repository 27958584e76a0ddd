package overview

import (
	"slices"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/sparkline"
)

// Every vhost, one at a time (docs/ARCHITECTURE.md §3.4). Showing every
// vhost of a broker that has several, the overview lists them in turn
// (after a first page, from the first list on; else after a first list
// of all): a vhost's list, paired with that vhost's
// DLQs (dead-lettering never leaves a vhost), replaces that vhost's
// rows. A refresh then holds one vhost's list beside the rows instead of
// a second copy of every queue, and the broker works a vhost's time, not
// the whole list's, at once.

// byVhost reports whether a due list reads one vhost: every vhost is on
// screen, the broker has several, and rows are on screen from a first
// page or a first list of all.
func (m *Model) byVhost() bool {
	return m.vhost == "" && len(m.brokerVhosts) > 1 && len(m.rows) > 0 && m.status.Loaded && !m.awaitingFull
}

// nextVhost is the vhost the next list reads: the first asked for (r, a
// queue gone), else the one after the last listed.
func (m *Model) nextListed() string {
	if len(m.relist) > 0 {
		vh := m.relist[0]
		m.relist = m.relist[1:]
		return vh
	}
	i := sort.SearchStrings(m.brokerVhosts, m.vhostCursor)
	if i < len(m.brokerVhosts) && m.brokerVhosts[i] == m.vhostCursor {
		i++
	}
	if i >= len(m.brokerVhosts) {
		i = 0
	}
	m.vhostCursor = m.brokerVhosts[i]
	return m.vhostCursor
}

// askList asks for vhosts to be listed at once, in turn; with no vhost
// named, or when lists are not read by vhost, for a list of all.
func (m *Model) askList(vhosts ...string) {
	if !m.byVhost() {
		m.needList = true
		return
	}
	if len(vhosts) == 0 {
		vhosts = m.brokerVhosts
	}
	for _, vh := range vhosts {
		if !slices.Contains(m.relist, vh) {
			m.relist = append(m.relist, vh)
		}
	}
}

// refsIn are the refs of vhost.
func refsIn(refs []domain.QueueRef, vhost string) []domain.QueueRef {
	var out []domain.QueueRef
	for _, r := range refs {
		if r.Vhost == vhost {
			out = append(out, r)
		}
	}
	return out
}

// applyVhostList puts one vhost's list in place of that vhost's rows.
func (m *Model) applyVhostList(msg snapshotMsg) (common.Screen, tea.Cmd) {
	snap, vh := msg.Snap, msg.Opts.Vhost
	m.lastTook = m.clock().Sub(m.fetchStarted)
	m.listedAt = m.fetchStarted
	m.vhostListedAt[vh] = m.fetchStarted
	selected, hadSelection := m.Selected()
	if snap.Vhosts != nil {
		m.setBrokerVhosts(snap.Vhosts)
	}
	m.rows = spliceVhost(m.rows, vh, snap, m.trends, m.judge, m.inbox.HasInbox)
	for _, q := range snap.Queues {
		m.vhosts[q.Vhost] = struct{}{}
	}
	if m.partialOf > 0 && len(m.relist) == 0 {
		// The first list of every vhost is in.
		m.partialOf = 0
	}
	m.status = Status{Loaded: true, Overview: snap.Overview, Nodes: snap.Nodes, TakenAt: snap.TakenAt,
		StatsAge: snap.StatsAge, ListedAt: m.oldestListed(), ListEvery: m.listEvery() * time.Duration(len(m.brokerVhosts)),
		ByVhost: true}
	return m, m.settle(selected.Ref(), hadSelection, msg.Opts, len(m.relist) > 0)
}

// setBrokerVhosts takes the broker's vhosts, dropping the rows of those
// deleted since.
func (m *Model) setBrokerVhosts(names []string) {
	m.brokerVhosts = slices.Sorted(slices.Values(names))
	for vh := range m.vhostListedAt {
		if _, found := slices.BinarySearch(m.brokerVhosts, vh); !found {
			delete(m.vhostListedAt, vh)
		}
	}
	for _, vh := range vhostsOf(m.rows) {
		if _, found := slices.BinarySearch(m.brokerVhosts, vh); !found {
			m.rows = spliceVhost(m.rows, vh, &domain.Snapshot{TakenAt: m.clock()}, m.trends, m.judge, m.inbox.HasInbox)
		}
	}
}

// vhostsOf are the vhosts of rows sorted by vhost, each once.
func vhostsOf(rows []row) []string {
	var out []string
	for i := range rows {
		if vh := rows[i].q.Vhost; len(out) == 0 || out[len(out)-1] != vh {
			out = append(out, vh)
		}
	}
	return out
}

// unlisted counts the broker's vhosts not listed yet by vhost.
func (m *Model) unlisted() int {
	n := 0
	for _, vh := range m.brokerVhosts {
		if _, ok := m.vhostListedAt[vh]; !ok {
			n++
		}
	}
	return n
}

// oldestListed is when the vhost listed longest ago was.
func (m *Model) oldestListed() time.Time {
	var oldest time.Time
	for _, vh := range m.brokerVhosts {
		at, ok := m.vhostListedAt[vh]
		if !ok {
			at = m.status.ListedAt // listed with all of them
		}
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	return oldest
}

// spliceVhost replaces the rows of vhost vh (contiguous: rows are sorted
// by vhost, then name, as snapshots are) with the queues of snap, a list
// of that vhost alone. Queues no longer listed are forgotten by the
// judge and their trends dropped; those listed keep their trends and are
// observed by the judge. The rows are moved in place when their slice
// has room.
func spliceVhost(rows []row, vh string, snap *domain.Snapshot, trends map[domain.QueueRef]*trend, judge *trouble.Tracker, hasInbox func(domain.QueueRef) bool) []row {
	a := sort.Search(len(rows), func(i int) bool { return rows[i].q.Vhost >= vh })
	b := sort.Search(len(rows), func(i int) bool { return rows[i].q.Vhost > vh })
	listed := make(map[string]struct{}, len(snap.Queues))
	for _, q := range snap.Queues {
		listed[q.Name] = struct{}{}
	}
	var gone []domain.QueueRef
	for i := a; i < b; i++ {
		if _, ok := listed[rows[i].q.Name]; !ok {
			ref := rows[i].q.Ref()
			gone = append(gone, ref)
			delete(trends, ref)
		}
	}
	judge.Forget(gone)
	judge.ObserveSome(snap.TakenAt, snap.Queues)
	alarms := nodeAlarms(snap.Nodes)
	fresh := make([]row, len(snap.Queues))
	for i, q := range snap.Queues {
		ref := q.Ref()
		t := trends[ref]
		if t == nil {
			t = newTrend(q)
			trends[ref] = t
		}
		fresh[i] = makeRow(q, t, judge.Marks(ref), judge.Window(), alarms[q.Node], snap.TakenAt, hasInbox(ref))
		t.depth.Push(q.Messages)
	}
	rows = slices.Replace(rows, a, b, fresh...)
	for i := a; i < len(rows); i++ {
		rows[i].trend.row = i
	}
	return rows
}

// newTrend is the trend of a queue first seen.
func newTrend(q domain.Queue) *trend {
	vhost := sanitize.Text(q.Vhost)
	return &trend{depth: sparkline.NewHistory[int64](historySize),
		vhost: vhost, vhostWidth: ansi.StringWidth(vhost), name: sanitize.Text(q.Name),
		search: strings.ToLower(q.Vhost + "/" + q.Name)}
}
