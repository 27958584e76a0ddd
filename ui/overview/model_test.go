package overview

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/table"
	"github.com/warrenops/warren/ui/styles"
)

func TestSortKeyCyclesThroughOrders(t *testing.T) {
	ts := func(d time.Duration) *time.Time { x := taken.Add(-d); return &x }
	a := queue("/", "alpha", 10)
	a.HeadMessageTimestamp = ts(time.Minute)
	b := queue("/", "bravo", 500)
	b.DLQ, b.DLQMessages = &domain.QueueRef{Vhost: "/", Name: "bravo.dlq"}, 2
	c := queue("/", "charlie", 50)
	c.HeadMessageTimestamp = ts(time.Hour)
	c.DLQ, c.DLQMessages = &domain.QueueRef{Vhost: "/", Name: "charlie.dlq"}, 9
	l := &lister{replies: []reply{{snap: snapshot(a, b, c)}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())

	want := []struct {
		by    SortBy
		order []string
	}{
		{ByDepth, []string{"bravo", "charlie", "alpha"}},
		{ByAge, []string{"charlie", "alpha", "bravo"}},
		{ByDLQ, []string{"charlie", "bravo", "alpha"}},
		{ByName, []string{"alpha", "bravo", "charlie"}},
		{ByDepth, []string{"bravo", "charlie", "alpha"}},
	}
	for i, w := range want {
		if i > 0 {
			m, _ = update(t, m, press("s"))
		}
		if m.sortBy != w.by || !slices.Equal(shown(m), w.order) {
			t.Fatalf("step %d: sort %v shows %v, want %v %v", i, m.sortBy, shown(m), w.by, w.order)
		}
	}
}

func TestSortingByAgeFetchesEveryHeadTimestamp(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	m, cmd := update(t, m, press("s"))
	if m.sortBy != ByAge {
		t.Fatalf("sort = %v, want age", m.sortBy)
	}
	load(t, m, cmd)
	if got := l.asked[len(l.asked)-1]; !got.AllRates {
		t.Fatalf("age order fetched %+v, want AllRates", got)
	}
}

func TestFilterNarrowsRowsWhileTyping(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "orders", 1), queue("/", "orders.dlq", 1), queue("billing", "invoices", 1))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())

	m, _ = update(t, m, press("/"))
	if !m.Capturing() {
		t.Fatal("typing a filter must capture keys")
	}
	for _, r := range "ORD" {
		m, _ = update(t, m, press(string(r)))
	}
	if got := shown(m); !slices.Equal(got, []string{"orders", "orders.dlq"}) {
		t.Fatalf("filter ORD shows %v", got)
	}
	m, _ = update(t, m, press("enter"))
	if m.Capturing() || len(shown(m)) != 2 {
		t.Fatalf("enter must keep the filter and stop capturing: capturing=%v shown=%v", m.Capturing(), shown(m))
	}
	m, _ = update(t, m, press("esc"))
	if len(shown(m)) != 3 {
		t.Fatalf("esc must clear the filter, shows %v", shown(m))
	}
	m, _ = update(t, m, press("/"))
	for _, r := range "billing/" {
		m, _ = update(t, m, press(string(r)))
	}
	if got := shown(m); !slices.Equal(got, []string{"invoices"}) {
		t.Fatalf("filter on vhost/ shows %v", got)
	}
}

func TestVhostSwitchFetchesThatVhostAndDropsStaleResults(t *testing.T) {
	all := snapshot(queue("/", "orders", 1), queue("billing", "invoices", 1))
	l := &lister{replies: []reply{{snap: all}, {snap: all}, {snap: snapshot(queue("/", "orders", 1))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	staleFetch := m.fetch()

	m, cmd := update(t, m, press("v"))
	if len(m.rows) != 0 {
		t.Fatal("rows of the previous vhost must not be shown under the new one")
	}
	m, _ = update(t, m, run(t, staleFetch))
	if len(m.rows) != 0 {
		t.Fatal("a result fetched before the switch was applied")
	}
	m, _ = load(t, m, cmd)
	if got := l.asked[len(l.asked)-1].Vhost; got != "/" {
		t.Fatalf("first switch asked vhost %q, want /", got)
	}
	if got := shown(m); !slices.Equal(got, []string{"orders"}) {
		t.Fatalf("after switch shows %v", got)
	}
	m, _ = update(t, m, press("v"))
	if m.vhost != "billing" {
		t.Fatalf("second switch goes to %q, want billing", m.vhost)
	}
	m, _ = update(t, m, press("v"))
	if m.vhost != "" {
		t.Fatalf("third switch goes to %q, want all", m.vhost)
	}
}

func TestStaleTickIsIgnored(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	old := tickMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}}
	m, _ = update(t, m, press("r"))
	if _, cmd := update(t, m, old); cmd != nil {
		t.Fatal("a tick of the previous chain started a fetch")
	}
	if _, cmd := update(t, m, tickMsg{Stamp: common.Stamp{ID: m.id + 1000, Tag: m.tag}}); cmd != nil {
		t.Fatal("another overview's tick started a fetch")
	}
	if _, cmd := update(t, m, tickMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}}); cmd == nil {
		t.Fatal("the current tick did not fetch")
	}
}

func TestDisconnectedBrokerIsRetriedAndRecovers(t *testing.T) {
	down := &domain.Error{Kind: domain.ErrUnreachable, Msg: "connection refused"}
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1))}, {err: down}, {snap: snapshot(queue("/", "a", 2))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	m, cmd := load(t, m, m.fetch())
	if st := m.Status(); !domain.IsDisconnected(st.Err) || st.Stopped || !st.Loaded {
		t.Fatalf("status after failure = %+v", st)
	}
	if _, ok := run(t, cmd).(tickMsg); !ok {
		t.Fatal("a failed fetch must schedule a retry")
	}
	if len(m.rows) != 1 {
		t.Fatal("the last good figures must stay on screen")
	}
	m, _ = update(t, m, tickMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}})
	m, _ = load(t, m, m.fetch())
	if st := m.Status(); st.Err != nil || m.rows[0].q.Messages != 2 {
		t.Fatalf("did not recover: %+v", st)
	}
}

func TestRefusedCredentialsStopPolling(t *testing.T) {
	refused := &domain.Error{Kind: domain.ErrUnauthorized, Msg: "401"}
	l := &lister{replies: []reply{{err: refused}, {snap: snapshot(queue("/", "a", 1))}}}
	m := newModel(l)
	m, cmd := load(t, m, m.Init())
	if cmd != nil || !m.Status().Stopped {
		t.Fatal("refused credentials must stop polling")
	}
	m, cmd = update(t, m, press("r"))
	m, _ = load(t, m, cmd)
	if st := m.Status(); st.Stopped || st.Err != nil {
		t.Fatalf("r must retry: %+v", st)
	}
}

func TestRatesAreAskedForVisibleRowsOnly(t *testing.T) {
	var qs []domain.Queue
	for i := range 100 {
		q := queue("/", string(rune('A'+i/26))+string(rune('a'+i%26)), int64(1000-i))
		q.HasRates = false
		qs = append(qs, q)
	}
	l := &lister{replies: []reply{{snap: snapshot(qs...)}}}
	m := newModel(l)
	m, cmd := load(t, m, m.Init())
	if len(l.asked[0].RatesFor) != 0 {
		t.Fatal("the first fetch cannot know the visible rows")
	}
	m, cmd = load(t, m, cmd) // visible rows lack rates: fetch again at once
	got := l.asked[1].RatesFor
	start, end := m.tbl.Window()
	if len(got) != end-start || got[0] != qs[0].Ref() {
		t.Fatalf("asked rates for %d rows starting %v, want the %d visible", len(got), got[0], end-start)
	}
	if _, ok := run(t, cmd).(tickMsg); !ok {
		t.Fatal("rows asked for but still without rates must wait for the next tick")
	}
}

func TestTroubleAndWarnings(t *testing.T) {
	dlq := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	withDLQ := func(n int64) domain.Queue {
		q := queue("/", "orders", 5)
		q.DLQ, q.DLQMessages = &dlq, n
		return q
	}
	noConsumers := queue("/", "idle", 5)
	noConsumers.Consumers = 0
	unread := queue("/", "off-screen", 5)
	unread.Consumers, unread.HasRates = 0, false
	growing := func(depth int64) domain.Queue {
		q := queue("/", "growing", depth)
		q.PublishRate, q.AckRate = 50, 10
		return q
	}
	isDLQ := func(n int64) domain.Queue {
		q := queue("/", "orders.dlq", n)
		q.Consumers, q.DLQOf = 0, []domain.QueueRef{{Vhost: "/", Name: "orders"}}
		return q
	}
	parked := func(n int64) domain.Queue {
		q := queue("/", "orders.dlq.quarantine", n)
		q.Consumers, q.Parking = 0, true
		return q
	}
	onAlarm := queue("/", "alarmed", 0)
	onAlarm.Node = "rabbit@b"
	alarmNodes := []domain.Node{{Name: "rabbit@b", Running: true, MemAlarm: true}}
	tests := []struct {
		name    string
		samples []domain.Queue
		nodes   []domain.Node
		want    table.Tone
	}{
		{name: "steady queue is normal", samples: []domain.Queue{queue("/", "q", 5), queue("/", "q", 5)}, want: table.Normal},
		{name: "paired DLQ holding letters is a warning", samples: []domain.Queue{withDLQ(3), withDLQ(3)}, want: table.Warn},
		{name: "paired DLQ growing is trouble", samples: []domain.Queue{withDLQ(3), withDLQ(4)}, want: table.Trouble},
		{name: "no consumers with ready messages is trouble", samples: []domain.Queue{noConsumers, noConsumers}, want: table.Trouble},
		{name: "a row without statistics is not judged: its consumers are unknown", samples: []domain.Queue{unread, unread}, want: table.Normal},
		{name: "publish above ack and depth rising once is not yet: one step is no trend", samples: []domain.Queue{growing(100), growing(150)}, want: table.Normal},
		{name: "publish above ack and depth rising over three samples is trouble", samples: []domain.Queue{growing(100), growing(150), growing(200)}, want: table.Trouble},
		{name: "publish above ack but depth falling is not", samples: []domain.Queue{growing(150), growing(100)}, want: table.Normal},
		{name: "DLQ receiving letters is trouble", samples: []domain.Queue{isDLQ(3), isDLQ(5)}, want: table.Trouble},
		{name: "DLQ holding letters is a warning", samples: []domain.Queue{isDLQ(5), isDLQ(5)}, want: table.Warn},
		{name: "parking queue without consumers is a warning, not trouble", samples: []domain.Queue{parked(14), parked(14)}, want: table.Warn},
		{name: "parking queue taking a quarantine is a warning", samples: []domain.Queue{parked(14), parked(20)}, want: table.Warn},
		{name: "queue on a node in alarm is trouble", samples: []domain.Queue{onAlarm, onAlarm}, nodes: alarmNodes, want: table.Trouble},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replies []reply
			for i, q := range tt.samples {
				snap := snapshot(q)
				snap.TakenAt = taken.Add(time.Duration(i) * 2 * time.Second)
				if tt.nodes != nil {
					snap.Nodes = tt.nodes
				}
				replies = append(replies, reply{snap: snap})
			}
			l := &lister{replies: replies}
			m := newModel(l)
			m, _ = load(t, m, m.Init())
			for range tt.samples[1:] {
				m, _ = load(t, m, m.fetch())
			}
			if got := m.rows[0].tone; got != tt.want {
				t.Fatalf("tone = %v, want %v (reasons %v)", got, tt.want, m.rows[0].reasons)
			}
		})
	}
}

func TestNavigationFromARow(t *testing.T) {
	dlq := domain.QueueRef{Vhost: "/", Name: "a.dlq"}
	withDLQ := queue("/", "a", 30)
	withDLQ.DLQ = &dlq
	isDLQ := queue("/", "a.dlq", 20)
	isDLQ.DLQOf = []domain.QueueRef{withDLQ.Ref()}
	plain := queue("/", "plain", 10)
	parked := queue("/", "a.dlq.quarantine", 5)
	parked.Parking = true
	l := &lister{replies: []reply{{snap: snapshot(withDLQ, isDLQ, plain, parked)}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())

	_, cmd := update(t, m, press("enter"))
	if got := openedQueue(t, cmd); got != withDLQ.Ref() {
		t.Fatalf("enter opened %v", got)
	}
	_, cmd = update(t, m, press("d"))
	if got := openedQueue(t, cmd); got != (common.OpenDLQMsg{Queue: dlq}) {
		t.Fatalf("d on a queue opened %v, want its paired DLQ", got)
	}
	m, _ = update(t, m, press("j"))
	_, cmd = update(t, m, press("d"))
	if got := openedQueue(t, cmd); got != (common.OpenDLQMsg{Queue: isDLQ.Ref()}) {
		t.Fatalf("d on a DLQ opened %v, want itself", got)
	}
	m, _ = update(t, m, press("j"))
	_, cmd = update(t, m, press("d"))
	if e, ok := openedQueue(t, cmd).(common.ErrorMsg); !ok || e.Err == nil {
		t.Fatal("d on a queue without DLQ must explain why")
	}
	m, _ = update(t, m, press("j"))
	_, cmd = update(t, m, press("d"))
	if got := openedQueue(t, cmd); got != (common.OpenDLQMsg{Queue: parked.Ref()}) {
		t.Fatalf("d on a parking queue opened %v, want itself, to release from", got)
	}
}

func TestCursorFollowsItsQueueAcrossSnapshots(t *testing.T) {
	l := &lister{replies: []reply{
		{snap: snapshot(queue("/", "a", 3), queue("/", "b", 2), queue("/", "c", 1))},
		{snap: snapshot(queue("/", "a", 1), queue("/", "b", 2), queue("/", "c", 3))},
	}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	m, _ = update(t, m, press("j"))
	m, _ = load(t, m, m.fetch())
	if q, _ := m.Selected(); q.Name != "b" {
		t.Fatalf("cursor on %q after reorder, want b", q.Name)
	}
	m, _ = update(t, m, press("k"))
	m, _ = load(t, m, m.fetch())
	if q, _ := m.Selected(); q.Name != "c" {
		t.Fatalf("cursor on %q, want c", q.Name)
	}
}

func TestDepthHistoryIsBoundedAndForgetsDeletedQueues(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1), queue("/", "b", 1))}}}
	m := newModel(l)
	for range historySize + 5 {
		m, _ = load(t, m, m.fetch())
	}
	if n := m.trends[domain.QueueRef{Vhost: "/", Name: "a"}].depth.Len(); n != historySize {
		t.Fatalf("history holds %d samples, want %d", n, historySize)
	}
	l.replies = []reply{{snap: snapshot(queue("/", "a", 1))}}
	l.asked = nil
	m, _ = load(t, m, m.fetch())
	if _, ok := m.trends[domain.QueueRef{Vhost: "/", Name: "b"}]; ok {
		t.Fatal("history of a deleted queue is kept")
	}
}

func TestUnknownOldestAgeSaysWhy(t *testing.T) {
	q := queue("/", "a", 5)
	q.OldestUnknownReason = "publishers set no timestamp"
	l := &lister{replies: []reply{{snap: snapshot(q)}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	if got := m.renderRow(0).Cells[6].Text; got != format.Unknown {
		t.Fatalf("oldest cell = %q, want %q", got, format.Unknown)
	}
	if note := m.note(); !contains(note, "oldest age unknown: publishers set no timestamp") {
		t.Fatalf("note does not say why: %q", note)
	}
}

func TestBrokerTextIsSanitised(t *testing.T) {
	evil := queue("/", "x\x1b]52;c;payload\x07", 1)
	l := &lister{replies: []reply{{snap: snapshot(evil)}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	if v := m.View(); contains(v, "\x1b]") || contains(v, "\x07") {
		t.Fatalf("escape sequence reached the view: %q", v)
	}
}

func TestOverviewFitsTheNarrowestTerminal(t *testing.T) {
	q := queue("tenant-with-a-long-name", "a-queue-name-that-is-much-too-long-to-fit", 123456)
	l := &lister{replies: []reply{{snap: snapshot(q)}}}
	m := newModel(l)
	for _, width := range []int{80, 100, 120, 200} {
		m.SetSize(width, 20)
		m, _ = load(t, m, m.fetch())
		for _, line := range strings.Split(m.View(), "\n") {
			if w := ansi.StringWidth(line); w > width {
				t.Fatalf("at %d cells a line is %d wide: %q", width, w, line)
			}
		}
	}
}

func TestTheVhostColumnFitsTheVhostsShown(t *testing.T) {
	tests := []struct {
		name      string
		scope     string
		queues    []domain.Queue
		wantVhost int // width of the VHOST column, 0 for none
		wantCell  string
	}{
		{name: "one vhost shown drops the column", scope: "billing", queues: []domain.Queue{queue("billing", "invoices", 1)}},
		{name: "short vhosts keep it as narrow as its title", queues: []domain.Queue{queue("/", "a", 1), queue("b", "b", 1)}, wantVhost: 5, wantCell: "/"},
		{name: "it fits the longest vhost", queues: []domain.Queue{queue("/", "a", 1), queue("billing-eu", "b", 1)}, wantVhost: 10, wantCell: "/"},
		{name: "up to a bound", queues: []domain.Queue{queue("tenant-with-a-very-long-name", "a", 1)}, wantVhost: vhostMaxWidth, wantCell: "tenant-with-a-v…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &lister{replies: []reply{{snap: snapshot(tt.queues...)}}}
			m := New(Options{Lister: l, Styles: newModel(l).st, Refresh: time.Nanosecond, Vhost: tt.scope})
			m.SetSize(120, 10)
			m, _ = load(t, m, m.Init())
			head := strings.Split(m.View(), "\n")[1]
			i := slices.Index(m.cols, colVhost)
			if tt.wantVhost == 0 {
				if i >= 0 || !strings.HasPrefix(head, "  NAME") {
					t.Fatalf("a single vhost still has a VHOST column: %q", head)
				}
				// The name takes the VHOST column's 9 cells: 22 + 9.
				if w := m.tbl.Widths()[slices.Index(m.cols, colName)]; w != 31 {
					t.Fatalf("NAME is %d wide, want 31", w)
				}
				return
			}
			if got := m.tbl.Widths()[i]; got != tt.wantVhost {
				t.Fatalf("VHOST is %d wide, want %d", got, tt.wantVhost)
			}
			row := strings.Split(m.View(), "\n")[2]
			if !strings.HasPrefix(strings.TrimLeft(row, " >!~"), tt.wantCell) {
				t.Fatalf("row %q does not start with %q", row, tt.wantCell)
			}
		})
	}
}

func manyQueuesWithoutRates(n int) []domain.Queue {
	var qs []domain.Queue
	for i := range n {
		q := queue("/", fmt.Sprintf("q%03d", i), int64(1000-i))
		q.HasRates = false
		qs = append(qs, q)
	}
	return qs
}

// Rows that scroll into view get their rates at once, not at the next
// tick; while that fetch is on its way, more scrolling asks for nothing.
func TestRowsComingIntoViewGetTheirRatesAtOnce(t *testing.T) {
	qs := manyQueuesWithoutRates(100)
	l := &lister{replies: []reply{{snap: snapshot(qs...)}}}
	m := newModel(l)
	m, cmd := load(t, m, m.Init())
	m, _ = load(t, m, cmd) // the visible rows' rates
	m, cmd = update(t, m, tea.KeyMsg{Type: tea.KeyPgDown})
	if cmd == nil {
		t.Fatal("rows scrolled into view without rates: no fetch")
	}
	msg := run(t, cmd)
	start, end := m.tbl.Window()
	got := l.asked[len(l.asked)-1].RatesFor
	if len(got) != end-start || got[0] != m.rows[m.view[start]].q.Ref() {
		t.Fatalf("asked rates for %v, want the %d rows now visible from %v", got, end-start, m.rows[m.view[start]].q.Ref())
	}
	if _, again := update(t, m, tea.KeyMsg{Type: tea.KeyPgDown}); again != nil {
		t.Fatal("a second fetch was started while one is on its way")
	}
	m, _ = update(t, m, msg)
	if _, cmd := update(t, m, tea.KeyMsg{Type: tea.KeyUp}); cmd != nil {
		t.Fatal("rows asked for already (and still without rates) were asked again")
	}
}

// A terminal size that arrives after the first snapshot still gets the
// visible rows their rates at once.
func TestASizeAfterTheFirstSnapshotAsksForRates(t *testing.T) {
	qs := manyQueuesWithoutRates(50)
	l := &lister{replies: []reply{{snap: snapshot(qs...)}}}
	m := New(Options{Lister: l, Styles: styles.New(true), Refresh: time.Nanosecond})
	m, cmd := load(t, m, m.Init())
	if _, ok := run(t, cmd).(tickMsg); !ok {
		t.Fatal("with no size yet, no row is visible: the next fetch waits for the tick")
	}
	m.SetSize(120, 30)
	_, cmd = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 30})
	if cmd == nil {
		t.Fatal("the size showed rows without rates: no fetch")
	}
	if _, ok := run(t, cmd).(snapshotMsg); !ok || len(l.asked[len(l.asked)-1].RatesFor) == 0 {
		t.Fatalf("the fetch after the size asked %+v", l.asked[len(l.asked)-1])
	}
}

// Scrolling soon after a fetch leaves the new rows to the next tick, so
// paging through a large broker does not fetch back to back.
func TestScrollingSoonAfterAFetchWaitsForTheTick(t *testing.T) {
	qs := manyQueuesWithoutRates(100)
	l := &lister{replies: []reply{{snap: snapshot(qs...)}}}
	m := New(Options{Lister: l, Styles: styles.New(true), Refresh: time.Hour})
	m.SetSize(120, 30)
	m, cmd := load(t, m, m.Init())
	m, _ = load(t, m, cmd) // the visible rows' rates; the tick it returns is an hour away
	asked := len(l.asked)
	if _, cmd := update(t, m, tea.KeyMsg{Type: tea.KeyPgDown}); cmd != nil {
		t.Fatal("scrolling right after a fetch started another")
	}
	if len(l.asked) != asked {
		t.Fatalf("the lister was asked %d more times", len(l.asked)-asked)
	}
}

// Ages are never cut: a message 335 days old reads 335d in full at 120
// columns, and an absurd head timestamp widens the column instead of
// losing its digits.
func TestTheOldestColumnFitsTheAgesShown(t *testing.T) {
	ts := func(d time.Duration) *time.Time { x := taken.Add(-d); return &x }
	tests := []struct {
		name  string
		age   time.Duration
		want  string
		width int
	}{
		{"under a day", 21*time.Hour + 4*time.Minute, "21h04m", 6},
		{"a few days", 3*24*time.Hour + 4*time.Hour, "3d04h", 6},
		{"most of a year", 335*24*time.Hour + 21*time.Hour, "335d", 6},
		{"a timestamp from year 1", taken.Sub(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), "106751d", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := queue("/", "orders", 5)
			old.HeadMessageTimestamp = ts(tt.age)
			fresh := queue("/", "billing", 50)
			fresh.HeadMessageTimestamp = ts(12 * time.Second)
			m := newModel(&lister{replies: []reply{{snap: snapshot(old, fresh)}}})
			m, _ = load(t, m, m.Init())
			if got := m.tbl.Widths()[slices.Index(m.cols, colOldest)]; got != tt.width {
				t.Errorf("OLDEST is %d wide, want %d", got, tt.width)
			}
			var row string
			for _, line := range strings.Split(m.View(), "\n") {
				if strings.Contains(line, "orders") {
					row = line
				}
				if w := ansi.StringWidth(line); w > 120 {
					t.Errorf("line is %d cells wide at 120 columns: %q", w, line)
				}
			}
			if !strings.Contains(row, " "+tt.want+" ") || strings.Contains(row, "…") {
				t.Fatalf("row %q does not show the age %q whole", row, tt.want)
			}
		})
	}
}

func TestAnErrorQueueSaysHowItWasPaired(t *testing.T) {
	for _, c := range []struct {
		q    domain.Queue
		want string
	}{
		{domain.Queue{Name: "orders_error", DLQOf: []domain.QueueRef{{Name: "orders"}}, PairedBy: domain.PairedByNaming, ErrorQueue: true},
			" · error queue of orders (paired by naming)"},
		{domain.Queue{Name: "error", DLQOf: []domain.QueueRef{{Name: "Sales"}}, PairedBy: domain.PairedByLetter, ErrorQueue: true},
			" · error queue of Sales, as its messages say"},
		{domain.Queue{Name: "error", ErrorQueue: true}, " · an error queue by its name; its messages say which queues it serves"},
		{domain.Queue{Name: "orders.dlq", DLQOf: []domain.QueueRef{{Name: "orders"}, {Name: "orders.status"}}, PairedBy: domain.PairedByConfig},
			" · error queue of orders and orders.status (paired by config)"},
		{domain.Queue{Name: "orders.dlq", DLQOf: []domain.QueueRef{{Name: "orders"}, {Name: "orders.invoicing"}, {Name: "orders.status"}}, PairedBy: domain.PairedByConfig},
			" · error queue of orders, orders.invoicing and orders.status (paired by config)"},
		{domain.Queue{Name: "orders.dlq", DLQOf: []domain.QueueRef{{Name: "orders"}, {Name: "orders.invoicing"}, {Name: "orders.pending-payment"}, {Name: "orders.status"}}, PairedBy: domain.PairedByConfig},
			" · error queue of orders, orders.invoicing and 2 more (paired by config)"},
		{domain.Queue{Name: "error", DLQOf: []domain.QueueRef{{Name: "Sales\x1b[2J"}, {Name: "Billing"}}, PairedBy: domain.PairedByLetter, ErrorQueue: true},
			" · error queue of Sales\\x1b[2J and Billing, as its messages say"},
		{domain.Queue{Name: "orders.dlq", DLQOf: []domain.QueueRef{{Name: "orders"}}, PairedBy: domain.PairedByDLX}, ""},
	} {
		if got := format.PairedBy(c.q); got != c.want {
			t.Errorf("%s: %q, want %q", c.q.Name, got, c.want)
		}
	}
}

func TestABrokerThatNeverAnsweredShowsItsWholeError(t *testing.T) {
	hint := "is the management plugin enabled? (rabbitmq-plugins enable rabbitmq_management)"
	down := &domain.Error{Kind: domain.ErrUnreachable, Msg: "management API at http://10.0.0.9:15672 unreachable: dial tcp 10.0.0.9:15672: connect: connection refused; " + hint}
	l := &lister{replies: []reply{{err: down}}}
	m := newModel(l)
	m.SetSize(80, 20)
	m, _ = load(t, m, m.Init())
	view := ansi.Strip(m.View())
	if got := strings.Count(view, "\n") + 1; got != 20 {
		t.Fatalf("the view is %d lines on a screen of 20:\n%s", got, view)
	}
	for _, l := range strings.Split(view, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("a line is wider than the screen: %q", l)
		}
	}
	if joined := strings.Join(strings.Fields(view), " "); !strings.Contains(joined, "Its last error, whole: "+down.Error()) {
		t.Fatalf("the error is not on screen whole:\n%s", view)
	}

	// Queues on screen keep it to the status line.
	l.replies = append(l.replies, reply{snap: snapshot(queue("/", "a", 1))}, reply{err: down})
	m, _ = load(t, m, m.fetch())
	m, _ = load(t, m, m.fetch())
	if view := ansi.Strip(m.View()); strings.Contains(view, "whole:") || !strings.Contains(view, "a") {
		t.Fatalf("with queues on screen the error took the table's place:\n%s", view)
	}

	// A screen too short for it cuts it and says so.
	m2 := newModel(&lister{replies: []reply{{err: down}}})
	m2.SetSize(40, 8)
	m2, _ = load(t, m2, m2.Init())
	view = ansi.Strip(m2.View())
	if got := strings.Count(view, "\n") + 1; got != 8 || !strings.Contains(view, "…") {
		t.Fatalf("on a screen of 8 lines the view is %d lines:\n%s", got, view)
	}
}

// A look at one vhost forgets none of the others' history: back on
// every vhost, a queue's depth trend and the judge's samples of it go
// on from what was seen before, so its trouble mark does not start
// from nothing.
func TestAVhostOnItsOwnKeepsTheOthersHistory(t *testing.T) {
	all := func(n int64) reply {
		return reply{snap: snapshot(queue("/", "orders", 1), queue("billing", "invoices", n))}
	}
	l := &lister{replies: []reply{all(10), all(20), all(30), {snap: snapshot(queue("/", "orders", 1))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	m, _ = load(t, m, m.fetch())
	m, _ = load(t, m, m.fetch())
	invoices := domain.QueueRef{Vhost: "billing", Name: "invoices"}
	if got := m.trends[invoices].depth.Values(); len(got) != 3 {
		t.Fatalf("invoices' depth history: %v, want three samples", got)
	}
	m, cmd := update(t, m, press("v")) // "/" alone
	m, _ = load(t, m, cmd)
	if got := shown(m); !slices.Equal(got, []string{"orders"}) {
		t.Fatalf("on / the overview shows %v", got)
	}
	tr := m.trends[invoices]
	if tr == nil || len(tr.depth.Values()) != 3 {
		t.Fatalf("a look at / forgot invoices' history: %v", tr)
	}
}

// When the queues do not all fit, the status says which rows the screen
// shows: "17 of 17 queues" alone reads as all of them on screen.
func TestTheStatusSaysWhichRowsAreOnScreen(t *testing.T) {
	var qs []domain.Queue
	for i := range 40 {
		qs = append(qs, queue("/", fmt.Sprintf("q%02d", i), int64(1000-i)))
	}
	m := newModel(&lister{replies: []reply{{snap: snapshot(qs...)}}})
	m, _ = load(t, m, m.Init())
	v := m.View()
	if !contains(v, "40 of 40 queues (1–") {
		t.Fatalf("40 queues on 30 lines, yet the status does not say which rows show:\n%s", v)
	}
	m, _ = update(t, m, press("G"))
	if v := m.View(); !contains(v, "–40)") {
		t.Errorf("at the last row, the status does not say the rows end at 40:\n%s", v)
	}
	few := newModel(&lister{replies: []reply{{snap: snapshot(qs[:3]...)}}})
	few, _ = load(t, few, few.Init())
	if v := few.View(); contains(v, "3 of 3 queues (") {
		t.Errorf("every row fits, yet the status names rows:\n%s", v)
	}
}
