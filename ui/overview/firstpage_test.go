package overview

import (
	"context"
	"errors"
	"testing"

	"github.com/warrenops/warren/domain"
)

// pager is a lister that also answers FirstPage with one scripted page.
type pager struct {
	*lister
	page  *domain.Snapshot
	err   error
	sizes []int
}

func (p *pager) FirstPage(_ context.Context, _ string, size int) (*domain.Snapshot, error) {
	p.sizes = append(p.sizes, size)
	return p.page, p.err
}

// firstPage runs Init and returns its first page: Init asks for the page
// alone, the full snapshot comes after it.
func firstPage(t *testing.T, m *Model) firstPageMsg {
	t.Helper()
	page, ok := run(t, m.Init()).(firstPageMsg)
	if !ok {
		t.Fatalf("Init did not ask for a first page first")
	}
	return page
}

// fullAfter applies the first page and returns the full snapshot its
// command fetches.
func fullAfter(t *testing.T, m *Model, page firstPageMsg) (*Model, snapshotMsg) {
	t.Helper()
	m, cmd := update(t, m, page)
	full, ok := run(t, cmd).(snapshotMsg)
	if !ok {
		t.Fatalf("the first page did not start the full fetch")
	}
	return m, full
}

func TestFirstPageIsDrawnUntilTheFullSnapshotReplacesIt(t *testing.T) {
	page := snapshot(queue("/", "deep", 90), queue("/", "middle", 50))
	page.Partial, page.QueueTotal = true, 4
	full := snapshot(queue("/", "deep", 91), queue("/", "middle", 50), queue("/", "low", 3), queue("/", "empty", 0))
	p := &pager{lister: &lister{replies: []reply{{snap: full}}}, page: page}
	m := newModel(p.lister)
	m.lister = p
	pageMsg := firstPage(t, m)
	if len(p.sizes) != 1 || p.sizes[0] < 30 {
		t.Fatalf("first page sizes asked %v, want one page covering the table", p.sizes)
	}
	if len(p.asked) != 0 {
		t.Fatalf("the full snapshot was asked for before the first page came")
	}

	m, fullMsg := fullAfter(t, m, pageMsg)
	if !m.Status().Loaded || len(shown(m)) != 2 || shown(m)[0] != "deep" {
		t.Fatalf("after the first page: shown %v, loaded %v", shown(m), m.Status().Loaded)
	}
	if !contains(m.View(), "2 deepest shown, loading all 4 queues…") {
		t.Fatalf("the partial state is not marked:\n%s", m.View())
	}

	m, _ = update(t, m, fullMsg)
	if got := shown(m); len(got) != 4 || contains(m.View(), "loading all") || !contains(m.View(), "4 of 4 queues") {
		t.Fatalf("after the full snapshot: shown %v\n%s", got, m.View())
	}
	if h := m.rows[m.view[0]].trend.depth; h.Len() != 1 {
		t.Fatalf("the first page started a trend: %d samples", h.Len())
	}
}

// A page read from the broker's metrics says so, and the full snapshot
// takes the mark away with the page.
func TestFirstPageFromTheMetricsSaysSo(t *testing.T) {
	page := snapshot(queue("/", "deep", 90), queue("/", "middle", 50))
	page.Partial, page.QueueTotal, page.FromMetrics = true, 3, true
	full := snapshot(queue("/", "deep", 91), queue("/", "middle", 50), queue("/", "low", 3))
	p := &pager{lister: &lister{replies: []reply{{snap: full}}}, page: page}
	m := newModel(p.lister)
	m.lister = p
	m, fullMsg := fullAfter(t, m, firstPage(t, m))
	if !contains(m.View(), "2 deepest shown (from metrics), loading all 3 queues…") {
		t.Fatalf("the page's source is not named:\n%s", m.View())
	}
	m, _ = update(t, m, fullMsg)
	if v := m.View(); contains(v, "metrics") || !contains(v, "3 of 3 queues") {
		t.Fatalf("after the full snapshot:\n%s", v)
	}
}

func TestFirstPageAfterTheFullSnapshotIsIgnored(t *testing.T) {
	cases := []struct {
		name string
		page *domain.Snapshot
		err  error
	}{
		{"a late page", snapshot(queue("/", "stale", 1_000)), nil},
		{"a failed page", nil, errors.New("boom")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := snapshot(queue("/", "a", 1), queue("/", "b", 2))
			p := &pager{lister: &lister{replies: []reply{{snap: full}}}, page: c.page, err: c.err}
			m := newModel(p.lister)
			m.lister = p
			pageMsg := firstPage(t, m)
			// The page is overtaken by a refresh the operator asked for.
			m, cmd := update(t, m, press("r"))
			m, _ = update(t, m, run(t, cmd))
			pageMsg.Tag = m.tag
			m, cmd = update(t, m, pageMsg)
			if got := shown(m); cmd != nil || len(got) != 2 || got[0] != "b" || contains(m.View(), "loading all") || m.Status().Err != nil {
				t.Fatalf("shown %v, err %v\n%s", got, m.Status().Err, m.View())
			}
		})
	}
}

func TestAFailedFirstPageLeavesTheScreenWaiting(t *testing.T) {
	p := &pager{lister: &lister{replies: []reply{{snap: snapshot()}}}, err: errors.New("boom")}
	m := newModel(p.lister)
	m.lister = p
	pageMsg := firstPage(t, m)
	m, cmd := update(t, m, pageMsg)
	if m.Status().Loaded || m.Status().Err != nil || !contains(m.View(), "waiting for the broker") {
		t.Fatalf("status %+v\n%s", m.Status(), m.View())
	}
	if _, ok := run(t, cmd).(snapshotMsg); !ok {
		t.Fatalf("a failed first page did not start the full fetch")
	}
}
