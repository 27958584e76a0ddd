package overview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
)

// largeScene is a broker whose list of every queue takes listCost to
// read while a queue read alone takes nothing: it answers a list with
// every queue, and a read of some rows (OnlyRows) with those queues
// alone, without the pairing only the list gives, as the management
// client does. Its clock is the overview's: a list moves it on by
// listCost, and refresh moves it on by the wait between two fetches.
type largeScene struct {
	every    time.Duration
	at       time.Duration
	queue    func(at time.Duration) []domain.Queue
	listCost time.Duration
	// readAt is when the last snapshot read the queues.
	readAt time.Duration
	// listed are the vhosts the lists read, "" for all, in order.
	listed   []string
	lists    int
	rowReads int
	gone     map[string]bool
}

func (l *largeScene) now() time.Time { return taken.Add(l.at) }

// vhosts are the vhosts of qs, each once, plus those named in extra.
func (l *largeScene) vhosts(qs []domain.Queue) []string {
	var out []string
	for _, q := range qs {
		if !slices.Contains(out, q.Vhost) {
			out = append(out, q.Vhost)
		}
	}
	return out
}

// refresh waits out the refresh interval and fetches.
func (l *largeScene) refresh(t *testing.T, m *Model) *Model {
	t.Helper()
	l.at += l.every
	m, _ = load(t, m, m.fetch())
	return m
}

func (l *largeScene) Snapshot(_ context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	l.readAt = l.at
	var qs []domain.Queue
	for _, q := range l.queue(l.at) {
		if !l.gone[q.Name] {
			qs = append(qs, q)
		}
	}
	if !o.OnlyRows {
		l.lists++
		l.listed = append(l.listed, o.Vhost)
		var in []domain.Queue
		for _, q := range qs {
			if o.Vhost == "" || q.Vhost == o.Vhost {
				in = append(in, q)
			}
		}
		slices.SortStableFunc(in, func(x, y domain.Queue) int {
			return cmp.Or(strings.Compare(x.Vhost, y.Vhost), strings.Compare(x.Name, y.Name))
		})
		l.at += l.listCost
		snap := snapshot(in...)
		snap.TakenAt = l.now()
		if o.WithVhosts {
			snap.Vhosts = l.vhosts(qs)
		}
		return snap, nil
	}
	l.rowReads++
	snap := snapshot(l.queue(l.at)...)
	snap.TakenAt = l.now()
	want := map[domain.QueueRef]bool{}
	for _, r := range o.RatesFor {
		want[r] = true
	}
	var read []domain.Queue
	for _, q := range snap.Queues {
		if !want[q.Ref()] {
			continue
		}
		if l.gone[q.Name] {
			snap.Gone = append(snap.Gone, q.Ref())
			continue
		}
		q.DLQ, q.DLQOf, q.DLQMessages = nil, nil, 0
		read = append(read, q)
	}
	snap.Queues, snap.OnlyRows = read, true
	return snap, nil
}

// withIdle adds n empty queues to a scene, so that the table of a small
// terminal shows only the deepest.
func withIdle(n int, scene func(time.Duration) []domain.Queue) func(time.Duration) []domain.Queue {
	return func(at time.Duration) []domain.Queue {
		qs := scene(at)
		for i := range n {
			idle := queue("/", fmt.Sprintf("idle-%02d", i), 0)
			qs = append(qs, idle)
		}
		return qs
	}
}

func TestALargeBrokerIsListedTenTimesLessOftenThanItTakesAndItsRowsOnScreenAtEachRefresh(t *testing.T) {
	const window = time.Minute
	scene := &largeScene{every: DefaultRefresh, queue: withIdle(30, troubleScene(time.Hour)),
		listCost: time.Second}
	m := New(Options{Lister: scene, Refresh: DefaultRefresh, Window: window})
	m.clock = scene.now
	m.SetSize(120, 12)
	m, _ = load(t, m, m.Init())
	if scene.lists != 1 {
		t.Fatalf("the first snapshot made %d lists, want 1", scene.lists)
	}
	start, end := m.tbl.Window()
	if end-start >= len(m.rows) {
		t.Fatalf("the table shows %d of %d rows; the test needs rows off screen", end-start, len(m.rows))
	}
	for range 30 {
		m = scene.refresh(t, m)
	}
	// A list costs 1 s: one every 10 s, so about one refresh in five of
	// the 2 s refreshes lists every queue.
	if scene.lists < 5 || scene.lists > 9 {
		t.Errorf("%d lists in %d refreshes over %v, want one every 10 s", scene.lists, 30, scene.at)
	}
	if scene.rowReads < 20 {
		t.Errorf("%d reads of the rows on screen in 30 refreshes, want the refreshes between lists", scene.rowReads)
	}
	if got := m.status.ListEvery; got != 10*time.Second {
		t.Errorf("ListEvery = %v, want ten times the 1 s list", got)
	}
	if line := m.statusText(); !strings.Contains(line, "(every 10s), rows on screen each refresh") {
		t.Errorf("the status line does not say how old the list is: %q", line)
	}
	// reindex grows on screen: its depth is that of the last read, not
	// of the last list.
	reindex := scene.queue(scene.readAt)[4]
	for _, r := range m.rows {
		if r.q.Name == "reindex" && r.q.Messages != reindex.Messages {
			t.Errorf("reindex shows %d messages, the broker holds %d", r.q.Messages, reindex.Messages)
		}
	}
}

func TestAVerySlowListIsStillReadEveryTwoMinutes(t *testing.T) {
	scene := &largeScene{every: DefaultRefresh, queue: withIdle(30, troubleScene(time.Hour)),
		listCost: 20 * time.Second}
	m := New(Options{Lister: scene, Refresh: DefaultRefresh, Window: time.Minute})
	m.clock = scene.now
	m.SetSize(120, 12)
	m, _ = load(t, m, m.Init())
	if got := m.listEvery(); got != 2*time.Minute {
		t.Errorf("a 20 s list is read every %v, want every two minutes", got)
	}
}

// The marks of the rows off screen come from the lists alone, the rows
// on screen from every refresh; neither may flicker, and the status
// line's count follows the rows.
func TestTroubleMarksOffScreenHoldStillBetweenLists(t *testing.T) {
	for _, cost := range []time.Duration{time.Second, 10 * time.Second} {
		t.Run(fmt.Sprintf("a list of %v", cost), func(t *testing.T) { offScreenMarks(t, cost) })
	}
}

func offScreenMarks(t *testing.T, listCost time.Duration) {
	const window = time.Minute
	stop := 4 * time.Minute
	every := min(listDuty*listCost, maxListEvery)
	scene := &largeScene{every: DefaultRefresh, queue: withIdle(30, troubleScene(stop)),
		listCost: listCost}
	m := New(Options{Lister: scene, Refresh: DefaultRefresh, Window: window})
	m.clock = scene.now
	m.SetSize(120, 12)
	m, _ = load(t, m, m.Init())
	onScreen := func(name string) bool {
		start, end := m.tbl.Window()
		for i := start; i < end; i++ {
			if m.rows[m.view[i]].q.Name == name {
				return true
			}
		}
		return false
	}
	var first, cleared = map[string]time.Duration{}, map[string]time.Duration{}
	for scene.at < stop+3*window+2*every {
		m = scene.refresh(t, m)
		at := scene.at
		now := marked(m)
		for _, name := range []string{"orders", "orders.dlq"} {
			switch {
			case now[name] && first[name] == 0:
				first[name] = at
			case !now[name] && first[name] != 0 && cleared[name] == 0:
				cleared[name] = at
			case now[name] && cleared[name] != 0:
				t.Fatalf("at %v: %s marked again after clearing at %v", at, name, cleared[name])
			}
		}
		if got, rows := shownTrouble(t, m), countTrue(now); got != rows {
			t.Fatalf("at %v: the status line says %d in trouble, the rows %d", at, got, rows)
		}
	}
	if onScreen("orders") {
		t.Fatal("orders is on screen; the test needs it off screen")
	}
	for _, name := range []string{"orders", "orders.dlq"} {
		// The first dead letter comes at 5 s; the list after it shows it.
		if f := first[name]; f == 0 || f > 5*time.Second+every+DefaultRefresh+listCost {
			t.Errorf("%s first marked at %v, want by the first list after 5 s", name, f)
		}
		// The last comes at 4 m: the mark holds a window after the list
		// that showed it, and no longer.
		if c := cleared[name]; c < stop+window || c > stop+window+2*every+2*DefaultRefresh+2*listCost {
			t.Errorf("%s cleared at %v, want a window after the last dead letter's list (about %v)", name, c, stop+window)
		}
	}
}

func TestARowOnScreenThatIsGoneMakesTheNextFetchAList(t *testing.T) {
	scene := &largeScene{every: DefaultRefresh, queue: withIdle(30, troubleScene(time.Hour)),
		listCost: time.Second, gone: map[string]bool{}}
	m := New(Options{Lister: scene, Refresh: DefaultRefresh, Window: time.Minute})
	m.clock = scene.now
	m.SetSize(120, 12)
	m, _ = load(t, m, m.Init())
	m = scene.refresh(t, m)
	if scene.rowReads != 1 {
		t.Fatalf("the refresh after a list made %d reads of the rows, want 1", scene.rowReads)
	}
	scene.gone["reindex"] = true
	scene.at += scene.every
	m, cmd := load(t, m, m.fetch())
	var next *snapshotMsg
	for _, msg := range flatten(cmd) {
		if s, ok := msg.(snapshotMsg); ok {
			next = &s
		}
	}
	if next == nil {
		t.Fatal("a row on screen that is gone was not followed by a fetch at once")
	}
	if next.Opts.OnlyRows {
		t.Error("a row on screen that is gone was followed by another read of the rows, want a list")
	}
	m, _ = update(t, m, *next)
	for _, r := range m.rows {
		if r.q.Name == "reindex" {
			t.Error("reindex is still shown after the list that no longer has it")
		}
	}
}

// flatten runs cmd and the commands of its batches and returns their
// messages.
func flatten(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range batch {
			out = append(out, flatten(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// inVhosts spreads a scene over vhosts: the trouble scene in vhost
// "c-orders", and n idle queues in each of the others.
func inVhosts(idle int, others []string, scene func(time.Duration) []domain.Queue) func(time.Duration) []domain.Queue {
	return func(at time.Duration) []domain.Queue {
		var qs []domain.Queue
		for _, q := range scene(at) {
			q.Vhost = "c-orders"
			if q.DLQ != nil {
				q.DLQ = &domain.QueueRef{Vhost: "c-orders", Name: q.DLQ.Name}
			}
			for i := range q.DLQOf {
				q.DLQOf[i].Vhost = "c-orders"
			}
			qs = append(qs, q)
		}
		for _, vh := range others {
			for i := range idle {
				qs = append(qs, queue(vh, fmt.Sprintf("idle-%02d", i), 0))
			}
		}
		return qs
	}
}

// rowsInPlace checks that the rows are sorted by vhost and name and that
// each queue's trend knows its row.
func rowsInPlace(t *testing.T, m *Model) {
	t.Helper()
	for i, r := range m.rows {
		if r.trend.row != i {
			t.Fatalf("row %d (%s/%s) has its trend at row %d", i, r.q.Vhost, r.q.Name, r.trend.row)
		}
		if i > 0 {
			p := m.rows[i-1].q
			if cmp.Or(strings.Compare(p.Vhost, r.q.Vhost), strings.Compare(p.Name, r.q.Name)) >= 0 {
				t.Fatalf("rows %d and %d out of order: %s/%s then %s/%s", i-1, i, p.Vhost, p.Name, r.q.Vhost, r.q.Name)
			}
		}
	}
}

func TestSeveralVhostsAreListedOneAtATimeInTurn(t *testing.T) {
	scene := &largeScene{every: DefaultRefresh, queue: inVhosts(10, []string{"a", "b"}, troubleScene(time.Hour)),
		listCost: time.Second, gone: map[string]bool{}}
	m := New(Options{Lister: scene, Refresh: DefaultRefresh, Window: time.Minute})
	m.clock = scene.now
	m.SetSize(120, 12)
	m, _ = load(t, m, m.Init())
	if len(m.brokerVhosts) != 3 {
		t.Fatalf("the first list named vhosts %v", m.brokerVhosts)
	}
	for range 40 {
		m = scene.refresh(t, m)
		rowsInPlace(t, m)
		if len(scene.listed) > 1 && !strings.Contains(m.statusText(), "one vhost listed at a time, each every") {
			t.Fatalf("after %d lists the status line does not say the vhosts are listed in turn: %q", len(scene.listed), m.statusText())
		}
	}
	// After the first list of all, each list reads one vhost, in turn.
	turns := scene.listed[1:]
	if scene.listed[0] != "" || len(turns) < 6 {
		t.Fatalf("lists read %q, want all then vhosts in turn", scene.listed)
	}
	for i, vh := range turns {
		if want := []string{"a", "b", "c-orders"}[i%3]; vh != want {
			t.Fatalf("list %d read %q, want %q (lists %q)", i+1, vh, want, scene.listed)
		}
	}
	if len(m.rows) != 25 {
		t.Fatalf("%d rows, want 25", len(m.rows))
	}
	if !strings.Contains(m.statusText(), "one vhost listed at a time, each every") {
		t.Errorf("the status line does not say the vhosts are listed in turn: %q", m.statusText())
	}

	// A queue declared in b shows once b is listed; one deleted in a
	// goes once a is.
	prev := scene.queue
	scene.queue = func(at time.Duration) []domain.Queue {
		return append(prev(at), queue("b", "idle-new", 7))
	}
	scene.gone["idle-03"] = true
	has := func(vh, name string) bool {
		for _, r := range m.rows {
			if r.q.Vhost == vh && r.q.Name == name {
				return true
			}
		}
		return false
	}
	for range 3 * listDuty {
		m = scene.refresh(t, m)
		rowsInPlace(t, m)
	}
	if !has("b", "idle-new") {
		t.Error("a queue declared in b is not shown after b's list")
	}
	if has("a", "idle-03") || has("b", "idle-03") {
		t.Error("a queue deleted is still shown after its vhost's list")
	}
	if _, ok := m.trends[domain.QueueRef{Vhost: "a", Name: "idle-03"}]; ok {
		t.Error("a deleted queue's trend is kept")
	}

	// r lists every vhost at once, one after the other.
	lists := len(scene.listed)
	m, cmd := update(t, m, press("r"))
	for range 3 {
		var next *snapshotMsg
		for _, msg := range flatten(cmd) {
			if s, ok := msg.(snapshotMsg); ok {
				next = &s
			}
		}
		if next == nil {
			t.Fatalf("r was followed by %d vhost lists, want 3 at once", len(scene.listed)-lists)
		}
		m, cmd = update(t, m, *next)
	}
	if got := scene.listed[lists:]; !slices.Equal(slices.Sorted(slices.Values(got)), []string{"a", "b", "c-orders"}) {
		t.Errorf("r listed %q, want every vhost once", got)
	}

	// A vhost deleted on the broker leaves the screen with its list.
	scene.queue = inVhosts(10, []string{"b"}, troubleScene(time.Hour))
	for range 3 * listDuty {
		m = scene.refresh(t, m)
		rowsInPlace(t, m)
	}
	for _, r := range m.rows {
		if r.q.Vhost == "a" {
			t.Fatal("the rows of a deleted vhost are still shown")
		}
	}
}

// The trouble of a vhost off screen is judged on that vhost's lists, and
// holds still between them.
func TestTroubleMarksInAVhostListedInTurnHoldStill(t *testing.T) {
	const window = time.Minute
	stop := 4 * time.Minute
	scene := &largeScene{every: DefaultRefresh, queue: inVhosts(12, []string{"a", "b"}, troubleScene(stop)),
		listCost: time.Second}
	m := New(Options{Lister: scene, Refresh: DefaultRefresh, Window: window})
	m.clock = scene.now
	m.SetSize(120, 12)
	m, _ = load(t, m, m.Init())
	first, cleared := map[string]time.Duration{}, map[string]time.Duration{}
	for scene.at < stop+3*window {
		m = scene.refresh(t, m)
		now := marked(m)
		for _, name := range []string{"orders", "orders.dlq"} {
			switch {
			case now[name] && first[name] == 0:
				first[name] = scene.at
			case !now[name] && first[name] != 0 && cleared[name] == 0:
				cleared[name] = scene.at
			case now[name] && cleared[name] != 0:
				t.Fatalf("at %v: %s marked again after clearing at %v", scene.at, name, cleared[name])
			}
		}
		if got, rows := shownTrouble(t, m), countTrue(now); got != rows {
			t.Fatalf("at %v: the status line says %d in trouble, the rows %d", scene.at, got, rows)
		}
	}
	for _, name := range []string{"orders", "orders.dlq"} {
		if first[name] == 0 || cleared[name] < stop+window {
			t.Errorf("%s marked from %v to %v, want from the first dead letter's list until a window after the last", name, first[name], cleared[name])
		}
	}
}

// pagedScene is a large scene that also answers a first page, as the
// management client does over every vhost: the deepest queues of the
// broker, without pairing, and the broker's vhosts.
type pagedScene struct{ *largeScene }

func (p pagedScene) FirstPage(_ context.Context, vhost string, size int) (*domain.Snapshot, error) {
	qs := slices.Clone(p.queue(p.at))
	slices.SortStableFunc(qs, func(a, b domain.Queue) int { return cmp.Compare(b.Messages, a.Messages) })
	snap := snapshot()
	snap.TakenAt = p.now()
	snap.Partial, snap.QueueTotal, snap.Vhosts = true, len(qs), p.vhosts(qs)
	for _, q := range qs[:min(size, len(qs))] {
		q.DLQ, q.DLQOf, q.DLQMessages = nil, nil, 0
		snap.Queues = append(snap.Queues, q)
	}
	return snap, nil
}

// Over several vhosts the first list after the page reads one vhost at a
// time, the page's deepest first, each replacing its page rows: never a
// list of every queue, which held the whole broker's queues beside the
// rows built from them.
func TestTheFirstListAfterAPageReadsOneVhostAtATime(t *testing.T) {
	scene := &largeScene{every: DefaultRefresh, queue: inVhosts(150, []string{"a", "b"}, troubleScene(time.Hour)),
		listCost: time.Second, gone: map[string]bool{}}
	// More queues than the page and the room a slice of it would have.
	total := len(scene.queue(0))
	m := New(Options{Lister: pagedScene{scene}, Refresh: DefaultRefresh, Window: time.Minute})
	m.clock = scene.now
	m.SetSize(120, 12)
	page, ok := run(t, m.Init()).(firstPageMsg)
	if !ok {
		t.Fatal("Init did not ask for a first page")
	}
	m, cmd := update(t, m, page)
	rowsInPlace(t, m)
	if !strings.Contains(m.statusText(), fmt.Sprintf("100 shown, listing the vhosts one by one, 3 to go (%d queues in all)", total)) {
		t.Fatalf("after the page the status line says %q", m.statusText())
	}
	// The rows have room for every queue: each vhost's list is spliced
	// in place, the slice never copied to grow.
	backing := &m.rows[:1][0]
	for i := 0; len(scene.listed) < 3; i++ {
		if i == 3 {
			t.Fatalf("the first list did not go on vhost after vhost: lists %q", scene.listed)
		}
		var next *snapshotMsg
		for _, msg := range flatten(cmd) {
			if s, ok := msg.(snapshotMsg); ok {
				next = &s
			}
		}
		if next == nil {
			t.Fatalf("after %q no vhost's list was asked for at once", scene.listed)
		}
		m, cmd = update(t, m, *next)
		rowsInPlace(t, m)
		if &m.rows[:1][0] != backing {
			t.Fatalf("after %q the rows moved to a new array", scene.listed)
		}
		if len(scene.listed) < 3 && !strings.Contains(m.statusText(), fmt.Sprintf("%d to go", 3-len(scene.listed))) {
			t.Fatalf("after %q the status line says %q", scene.listed, m.statusText())
		}
	}
	// The deepest queues are in c-orders: listed first.
	if !slices.Equal(scene.listed, []string{"c-orders", "a", "b"}) {
		t.Fatalf("the first list read %q, want c-orders (the page's) then a and b, never all at once", scene.listed)
	}
	if len(m.rows) != total || !strings.Contains(m.statusText(), fmt.Sprintf("%d of %d queues", total, total)) || strings.Contains(m.statusText(), "to go") {
		t.Fatalf("%d rows after every vhost was listed: %q", len(m.rows), m.statusText())
	}
	// The DLQ pairing comes with each vhost's list.
	for _, r := range m.rows {
		if r.q.Name == "orders" && r.q.DLQ == nil {
			t.Fatal("orders is not paired with its DLQ after its vhost's list")
		}
	}
	// From then on, refreshes read the rows on screen and list a vhost
	// in turn, never every queue.
	for range 20 {
		m = scene.refresh(t, m)
		rowsInPlace(t, m)
	}
	if slices.Contains(scene.listed, "") || scene.rowReads == 0 {
		t.Fatalf("after the first list: lists %q, %d row reads", scene.listed, scene.rowReads)
	}
}
