package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/styles"
)

type fakeReader struct{ rows []domain.FleetRow }

func (f fakeReader) Contexts() []string {
	var out []string
	for _, r := range f.rows {
		out = append(out, r.Context)
	}
	return out
}

func (f fakeReader) Environment(name string) string {
	return f.Read(context.Background(), name).Environment
}

func (f fakeReader) Read(_ context.Context, name string) domain.FleetRow {
	for _, r := range f.rows {
		if r.Context == name {
			return r
		}
	}
	return domain.FleetRow{Context: name, Err: "not in the fake"}
}

// settle runs cmd, a read of every context, and hands each answer to
// the view; it returns the commands the answers gave back.
func settle(t *testing.T, m *Model, cmd tea.Cmd) []tea.Cmd {
	t.Helper()
	var next []tea.Cmd
	msg := cmd()
	batch, ok := msg.(tea.BatchMsg)
	if !ok {
		batch = tea.BatchMsg{func() tea.Msg { return msg }}
	}
	for _, c := range batch {
		if c != nil {
			_, n := m.Update(c())
			next = append(next, n)
		}
	}
	return next
}

func TestTheFleetShowsEveryContextAndOpensOne(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	old := now.Add(-90 * time.Minute)
	r := fakeReader{rows: []domain.FleetRow{
		{Context: "prod-eu", Environment: "prod", Cluster: "rabbit@eu", Version: "4.3.6", NodesRunning: 3, Nodes: 3, Alarms: []string{},
			Queues: 40, InTrouble: 1, WorthALook: 2, DLQMessages: 1200, Growth: growth(37), DeepestDLQ: "/orders.dlq", DeepestMessages: 1100, OldestDeadLetter: &old, ReadAt: now},
		{Context: "staging", Environment: "staging", Err: "no answer within the timeout: dial tcp 10.0.0.9:15672: i/o timeout"},
		{Context: "dev\x1b[2J", Cluster: "rabbit@dev", Version: "3.10.8", NodesRunning: 1, Nodes: 1, Alarms: []string{}, ReadAt: now},
	}}
	m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 20})
	for i, next := range settle(t, m, m.Init()) {
		if next == nil {
			t.Fatalf("answer %d scheduled no next read", i)
		}
	}
	v := m.View()
	for _, want := range []string{"warren fleet", "3 contexts", "prod-eu", "rabbit@eu", "4.3.6", "3/3", "1200", "+37", "/orders.dlq 1100", "1h30m",
		"staging", "no answer: no answer within the timeout", "rabbit@dev", "3.10.8"} {
		if !strings.Contains(v, want) {
			t.Errorf("the fleet view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "\x1b[2J") {
		t.Error("a context name drew an escape sequence")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.Open() != "staging" || cmd == nil {
		t.Fatalf("enter opened %q, want staging and the view to end for it", m.Open())
	}
}

func growth(n int64) *int64 { return &n }

// A context's growth is measured against the read before: on its first
// read it is unknown, and said as unknown, not as a figure; measured and
// steady, it is 0, told apart from unknown.
func TestGrowthNotYetMeasuredIsADash(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	r := fakeReader{rows: []domain.FleetRow{
		{Context: "first", NodesRunning: 1, Nodes: 1, Alarms: []string{}, DLQMessages: 1200, ReadAt: now},
		{Context: "steady", NodesRunning: 1, Nodes: 1, Alarms: []string{}, DLQMessages: 1300, Growth: growth(0), ReadAt: now},
		{Context: "rising", NodesRunning: 1, Nodes: 1, Alarms: []string{}, DLQMessages: 1400, Growth: growth(5), ReadAt: now},
	}}
	m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 20})
	settle(t, m, m.Init())
	v := ansi.Strip(m.View())
	for dead, want := range map[string]string{"1200": "—", "1300": "0", "1400": "+5"} {
		at := strings.Index(v, " "+dead+" ")
		if at < 0 {
			t.Fatalf("no row with %s dead letters:\n%s", dead, v)
		}
		if cells := append(strings.Fields(v[at:]), ""); cells[1] != want {
			t.Errorf("%s dead letters: growth %q, want %q:\n%s", dead, cells[1], want, v)
		}
	}
	// The header says that a first read judges no growth yet, and stops
	// once every context has a second.
	if !strings.Contains(v, "first read: growth and the trouble it shows come with the next") {
		t.Errorf("the header does not say the first read judges no growth:\n%s", v)
	}
	r.rows[0].Growth = growth(0)
	settle(t, m, m.readIdle())
	if v := m.View(); strings.Contains(v, "first read") {
		t.Errorf("every context read twice, the header still says first read:\n%s", v)
	}
}

// A long vhost does not hide the deepest DLQ's depth or its name: the
// column takes what the terminal leaves over, and a name still too long
// loses its start, not its queue.
func TestTheDeepestDLQKeepsItsDepthAndItsQueue(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	r := fakeReader{rows: []domain.FleetRow{{Context: "b", Cluster: "rabbit@b", Version: "4.3.6", NodesRunning: 1, Nodes: 1,
		DLQMessages: 100000, DeepestDLQ: "warren-bench-export-100000-5a58ed/orders.dlq", DeepestMessages: 100000, ReadAt: now}}}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{132, "…-5a58ed/orders.dlq 100000"},
		{160, "warren-bench-export-100000-5a58ed/orders.dlq 100000"},
	} {
		m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Now: func() time.Time { return now }})
		m.Update(tea.WindowSizeMsg{Width: tc.width, Height: 20})
		settle(t, m, m.Init())
		v := m.View()
		if !strings.Contains(v, tc.want) {
			t.Errorf("width %d: the fleet view lacks %q:\n%s", tc.width, tc.want, v)
		}
		for _, l := range strings.Split(v, "\n") {
			if w := ansi.StringWidth(l); w > tc.width {
				t.Errorf("width %d: a line of %d cells: %q", tc.width, w, l)
			}
		}
	}
}

// Back from a context's dashboard, the cursor is on that context: enter
// opens it again, down the next one.
func TestTheFleetStartsOnTheContextItCameBackFrom(t *testing.T) {
	r := fakeReader{rows: []domain.FleetRow{{Context: "prod-eu"}, {Context: "prod-us"}, {Context: "staging"}}}
	m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Current: "prod-us"})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 20})
	if v := m.View(); !strings.Contains(v, "> prod-us") {
		t.Fatalf("the cursor is not on prod-us:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if m.Update(tea.KeyMsg{Type: tea.KeyEnter}); m.Open() != "staging" {
		t.Fatalf("down and enter opened %q, want staging", m.Open())
	}
	m = New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Current: "gone"})
	if m.Update(tea.KeyMsg{Type: tea.KeyEnter}); m.Open() != "prod-eu" {
		t.Fatalf("a context no longer in the config: enter opened %q, want the first", m.Open())
	}
}

// Opened from a dashboard, the view says esc goes back to it, and esc
// does, whichever row is chosen; as the first screen esc does nothing.
func TestEscGoesBackToTheDashboardThatOpenedTheFleet(t *testing.T) {
	r := fakeReader{rows: []domain.FleetRow{{Context: "prod-eu"}, {Context: "prod-us"}}}
	m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Current: "prod-us", Back: "prod-us"})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 20})
	if v := m.View(); !strings.Contains(v, "esc back to prod-us") {
		t.Errorf("the keys line does not offer esc:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyUp})
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEsc}); m.Open() != "prod-us" || cmd == nil {
		t.Errorf("esc opened %q, want the dashboard it came from, prod-us", m.Open())
	}
	first := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true)})
	first.Update(tea.WindowSizeMsg{Width: 160, Height: 20})
	if _, cmd := first.Update(tea.KeyMsg{Type: tea.KeyEsc}); first.Open() != "" || cmd != nil || strings.Contains(first.View(), "esc back") {
		t.Errorf("as the first screen esc opened %q", first.Open())
	}
}

// On a terminal too narrow for every column, the cluster and the
// version go first and the names shrink; what the view is for — dead
// letters, their growth, the deepest DLQ's depth, the oldest — stays.
func TestANarrowTerminalKeepsTheDeadLetters(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	old := now.Add(-90 * time.Minute)
	r := fakeReader{rows: []domain.FleetRow{
		{Context: "prod-eu-central-1", Environment: "prod", Cluster: "rabbit@eu-central", Version: "4.3.6", NodesRunning: 3, Nodes: 3,
			InTrouble: 1, WorthALook: 2, DLQMessages: 1200, Growth: growth(37), DeepestDLQ: "payments/orders.dlq", DeepestMessages: 1100, OldestDeadLetter: &old, ReadAt: now},
		{Context: "staging", Environment: "staging", Err: "no answer within the timeout"},
	}}
	for _, tc := range []struct {
		width       int
		shown, gone []string
	}{
		{80, []string{"DLQ MSGS", "GROWTH", "OLDEST", "1200", "+37", "dlq 1100", "1h30m", "3/3", "prod-eu-cen…", "no answer"}, []string{"CLUSTER", "VERSION", "ENV", "rabbit@eu-central", "4.3.6"}},
		{100, []string{"ENV", "prod", "1200", "+37", "1h30m", "dlq 1100"}, []string{"CLUSTER", "VERSION", "rabbit@eu-central"}},
		{120, []string{"VERSION", "4.3.6", "1200", "+37", "payments/orders.dlq 1100", "1h30m"}, []string{"CLUSTER"}},
		{160, []string{"CLUSTER", "rabbit@eu-central", "VERSION", "4.3.6", "payments/orders.dlq 1100"}, nil},
	} {
		m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Now: func() time.Time { return now }})
		m.Update(tea.WindowSizeMsg{Width: tc.width, Height: 20})
		settle(t, m, m.Init())
		v := ansi.Strip(m.View())
		for _, want := range tc.shown {
			if !strings.Contains(v, want) {
				t.Errorf("width %d: %q is not shown:\n%s", tc.width, want, v)
			}
		}
		for _, not := range tc.gone {
			if strings.Contains(v, not) {
				t.Errorf("width %d: %q is shown, want it left out:\n%s", tc.width, not, v)
			}
		}
		for _, line := range strings.Split(v, "\n") {
			if w := ansi.StringWidth(line); w > tc.width {
				t.Errorf("width %d: a line of %d cells: %q", tc.width, w, line)
			}
		}
	}
}

// slowReader answers for every context but one at once; that one
// answers when its read's timeout passes, as a broker that drops
// packets does.
type slowReader struct {
	fakeReader
	slow string
}

func (s slowReader) Read(ctx context.Context, name string) domain.FleetRow {
	if name == s.slow {
		<-ctx.Done()
		return domain.FleetRow{Context: name, Environment: s.Environment(name), Err: "no answer within the timeout: " + context.Cause(ctx).Error()}
	}
	return s.fakeReader.Read(ctx, name)
}

// A context that does not answer holds no other row back: each context
// is read on its own, its row shown as it answers, and the one still
// being read is not read twice.
func TestAContextThatDoesNotAnswerHoldsNoOtherBack(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	r := slowReader{slow: "us", fakeReader: fakeReader{rows: []domain.FleetRow{
		{Context: "eu", Cluster: "rabbit@eu", Version: "4.3.6", NodesRunning: 1, Nodes: 1, DLQMessages: 1200, ReadAt: now},
		{Context: "us", Environment: "prod"},
	}}}
	m := New(Options{Reader: r, Timeout: 50 * time.Millisecond, Styles: styles.New(true), Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 20})
	batch, ok := m.Init()().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("Init read %v, want one read per context", batch)
	}
	// eu answers; us is still being read.
	if _, next := m.Update(batch[0]()); next == nil {
		t.Fatal("eu's answer scheduled no next read")
	}
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "rabbit@eu") || !strings.Contains(v, "1200") || !strings.Contains(v, "us                 prod     reading…") {
		t.Fatalf("eu's row waits for us:\n%s", v)
	}
	// r reads again what is not being read: eu, not us.
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	if again := cmd(); again == nil {
		t.Fatal("r read nothing")
	} else if b, ok := again.(tea.BatchMsg); ok && len(b) != 1 {
		t.Fatalf("r started %d reads, want eu's alone while us is being read", len(b))
	}
	// us's timeout passes: its row says so.
	start := time.Now()
	m.Update(batch[1]())
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("us's read took %s, past its timeout", waited)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "us                 prod     no answer: no answer within the timeout") {
		t.Fatalf("us's row after its timeout:\n%s", v)
	}
	// An answer of a read older than the row's last is dropped.
	m.Update(rowMsg{i: 0, gen: 0, row: domain.FleetRow{Context: "eu", Err: "stale"}})
	if strings.Contains(m.View(), "stale") {
		t.Fatal("an older read's answer replaced a newer one")
	}
}

// A row has one line, so an error or the alarms are cut there; the
// selected row's are said whole below the table, where the hint at an
// error's end ("is the management plugin enabled?") can be read.
func TestTheSelectedRowSaysWhatItsLineCut(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	refused := "management API at http://127.0.0.1:15699 unreachable: dial tcp 127.0.0.1:15699: connect: connection refused; " +
		"is the management plugin enabled? (rabbitmq-plugins enable rabbitmq_management)"
	r := fakeReader{rows: []domain.FleetRow{
		{Context: "prod-eu", Environment: "prod", Cluster: "rabbit@eu", Version: "4.3.6", NodesRunning: 3, Nodes: 3, ReadAt: now},
		{Context: "prod-us", Environment: "prod", Cluster: "rabbit@us", Version: "4.3.6", NodesRunning: 3, Nodes: 3, ReadAt: now,
			Alarms: []string{"memory on rabbit@us-1", "disk on rabbit@us-2", "disk on rabbit@us-3"}},
		{Context: "staging", Environment: "staging", Err: refused},
	}}
	m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	settle(t, m, m.Init())
	whole := func() string { return strings.Join(strings.Fields(ansi.Strip(m.View())), " ") }
	if v := whole(); strings.Contains(v, "did not answer") || strings.Contains(v, "alarms:") {
		t.Fatalf("a healthy row selected, yet a detail is shown:\n%s", m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if v := whole(); !strings.Contains(v, "prod-us alarms: memory on rabbit@us-1; disk on rabbit@us-2; disk on rabbit@us-3") {
		t.Fatalf("the selected row's alarms are not said whole:\n%s", m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	v := ansi.Strip(m.View())
	if !strings.Contains(strings.Join(strings.Fields(v), " "), "staging did not answer: "+refused) {
		t.Fatalf("the selected row's error is not said whole:\n%s", v)
	}
	for _, line := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(line); w > 80 {
			t.Errorf("a line of %d cells on 80: %q", w, line)
		}
	}
}

// Keys typed faster than they are read arrive in one message: each is
// taken in turn, so the row opened is the one the operator moved to.
func TestKeysOfOneReadMoveAsTyped(t *testing.T) {
	r := fakeReader{rows: []domain.FleetRow{{Context: "a"}, {Context: "b"}, {Context: "c"}}}
	m := New(Options{Reader: r, Timeout: time.Second, Styles: styles.New(true)})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj")})
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.Open() != "c" {
		t.Fatalf("jj then enter opened %q, want c", m.Open())
	}
	m = New(Options{Reader: r, Timeout: time.Second, Styles: styles.New(true)})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjk")})
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.Open() != "b" {
		t.Fatalf("jjk then enter opened %q, want b", m.Open())
	}
}

// ? says what the columns mean, as every other screen's help does.
func TestQuestionMarkSaysWhatTheFleetsColumnsMean(t *testing.T) {
	m := New(Options{Reader: &fakeReader{}, Styles: styles.New(true)})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if strings.Contains(m.View(), "GROWTH: their change") {
		t.Fatalf("the legend shows before ? is pressed:\n%s", m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'?'}})
	v := m.View()
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{"TROUBLE: queues to act on now", "GROWTH: their change since the last read", "OLDEST: the oldest dead letter's age"} {
		if !strings.Contains(flat, want) {
			t.Errorf("after ?, the fleet view lacks %q:\n%s", want, v)
		}
	}
	// Below 132 cells the cluster's column is dropped: the legend does
	// not explain it.
	if strings.Contains(flat, "CLUSTER:") {
		t.Errorf("at 120 cells the legend explains the dropped CLUSTER column:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'?'}})
	if strings.Contains(m.View(), "GROWTH: their change") {
		t.Errorf("a second ? leaves the legend shown")
	}
}
