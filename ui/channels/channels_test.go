package channels

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

var t0 = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// fakeLister answers with the gateway's unconfirmed count taken from
// pending, one value per call, the last one repeated; now advances 5 s
// per call while the count moves, like the broker's statistics.
type fakeLister struct {
	mu      sync.Mutex
	calls   int
	pending []int64
	err     error
}

func (f *fakeLister) Channels(context.Context, string) (*domain.ChannelList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	n := f.pending[min(f.calls, len(f.pending))-1]
	l := &domain.ChannelList{Channels: []domain.ChannelStat{
		{Name: "10.0.0.7:40100 -> 10.0.0.1:5672 (1)", Connection: "order-gateway", User: "svc-gateway", Vhost: "shop", Number: 1,
			Confirm: ptr(true), Unconfirmed: ptr(n), Unacked: ptr(int64(0)), Prefetch: ptr(int64(0)), PublishRate: ptr(4.0), ConfirmRate: ptr(3.2)},
		{Name: "10.0.0.8:40200 -> 10.0.0.1:5672 (3)", Connection: "importer", User: "svc-import", Vhost: "shop", Number: 3,
			Confirm: ptr(true), Unconfirmed: ptr(int64(4)), Unacked: ptr(int64(0)), Prefetch: ptr(int64(0)), PublishRate: ptr(120.0), ConfirmRate: ptr(119.5)},
		{Name: "10.0.0.5:40001 -> 10.0.0.1:5672 (1)", Connection: "billing-worker\x1b[31m", User: "svc-billing", Vhost: "shop", Number: 1,
			Confirm: ptr(false), Unconfirmed: ptr(int64(0)), Unacked: ptr(int64(20)), Prefetch: ptr(int64(20)), GlobalPrefetch: ptr(int64(50)), AckRate: ptr(4.2)},
		{Name: "10.0.0.9:40300 -> 10.0.0.1:5672 (2)", Vhost: "shop", Number: 2},
	}}
	domain.SortChannels(l.Channels)
	return l, nil
}

func (f *fakeLister) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return t0.Add(time.Duration(min(f.calls, len(f.pending))) * 5 * time.Second)
}

func newScreen(f *fakeLister) *Model {
	m := New(Options{Lister: f, Styles: styles.New(true), Refresh: 10 * time.Millisecond, Now: f.now})
	m.SetSize(120, 40)
	return m
}

// poll runs n rounds of the screen's polling without waiting for ticks.
func poll(t *testing.T, m *Model, n int) {
	t.Helper()
	for range n {
		msg := m.fetch()()
		if _, cmd := m.Update(msg); cmd == nil {
			t.Fatal("the screen stopped polling")
		}
	}
}

func TestTroubleNeedsSeveralRisesNotTwoSamples(t *testing.T) {
	tests := []struct {
		name    string
		counts  []int64
		growing bool
	}{
		{"two samples rising", []int64{10, 20}, false},
		{"rising over several intervals", []int64{10, 20, 20, 30, 40}, true},
		{"rose then levelled off, rises still in the window", []int64{10, 20, 30, 40, 40, 40}, true},
		{"fell back", []int64{10, 20, 30, 40, 35}, false},
		{"steady window of pending confirms", []int64{8, 7, 8, 8, 7, 8}, false},
		{"rose once only", []int64{0, 0, 0, 50, 50}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history{}
			for i, n := range tt.counts {
				h.record([]domain.ChannelStat{{Name: "gw", Confirm: ptr(true), Unconfirmed: ptr(n)}}, t0.Add(time.Duration(i)*5*time.Second))
			}
			if got := h.growing("gw"); got != tt.growing {
				t.Errorf("growing = %v over %v, want %v", got, tt.counts, tt.growing)
			}
		})
	}
}

func TestTroubleClearsOnceTheRisesLeaveTheWindow(t *testing.T) {
	h := history{}
	at := t0
	rec := func(n int64) {
		h.record([]domain.ChannelStat{{Name: "gw", Confirm: ptr(true), Unconfirmed: ptr(n)}}, at)
		at = at.Add(5 * time.Second)
	}
	for _, n := range []int64{10, 20, 30, 40} {
		rec(n)
	}
	if !h.growing("gw") {
		t.Fatal("not marked while growing")
	}
	for range 8 { // 40 s flat: the rises are still within the minute
		rec(40)
	}
	if !h.growing("gw") {
		t.Fatal("the mark flapped off while the rises are in the window")
	}
	for range 6 { // a whole minute flat
		rec(40)
	}
	if h.growing("gw") {
		t.Error("still marked after a minute without a rise")
	}
	h.record(nil, at)
	if len(h) != 0 {
		t.Error("a closed channel's history is kept")
	}
}

func TestScreenSortsMarksAndFilters(t *testing.T) {
	f := &fakeLister{pending: []int64{10, 12, 20, 31, 37}}
	m := newScreen(f)
	poll(t, m, 5)
	v := m.View()
	gw, imp := strings.Index(v, "order-gateway"), strings.Index(v, "importer")
	if gw < 0 || imp < 0 || gw > imp {
		t.Fatalf("the channel with most unconfirmed is not first:\n%s", v)
	}
	for _, want := range []string{"4 channels, 2 in confirm mode · unconfirmed 41 on 2 channels", "! order-gateway: unconfirmed publishes keep growing (37 now)", `billing-worker\x1b[31m`, "20/50g"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "\x1b[31m") {
		t.Error("a hostile connection name reached the terminal")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	if !m.Capturing() {
		t.Fatal("/ does not start the filter")
	}
	for _, r := range "billing" {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	v = m.View()
	if strings.Contains(v, "order-gateway") || !strings.Contains(v, "billing-worker") || !strings.Contains(v, "1 shown") {
		t.Errorf("filter billing:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if m.Capturing() || !strings.Contains(m.View(), "order-gateway") {
		t.Errorf("esc while typing must clear the filter and stop capturing:\n%s", m.View())
	}
}

func TestLateAnswersAreDroppedAndFailuresKeepTheFigures(t *testing.T) {
	f := &fakeLister{pending: []int64{5}}
	m := newScreen(f)
	poll(t, m, 1)
	old := m.fetch()()
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	m.Update(listMsg{Stamp: old.(listMsg).Stamp, Err: errors.New("late")})
	if m.err != nil {
		t.Fatal("an answer from before the manual refresh was taken")
	}
	f.err = errors.New("connection refused")
	poll(t, m, 1)
	if v := m.View(); !strings.Contains(v, "refresh failed, retrying: connection refused") || !strings.Contains(v, "order-gateway") {
		t.Errorf("a failed refresh must keep the last figures and say so:\n%s", v)
	}
	m.Close()
	if _, cmd := m.Update(m.fetch()()); cmd != nil {
		t.Error("a closed screen keeps polling")
	}
}

func TestGoldenChannelsScreen(t *testing.T) {
	f := &fakeLister{pending: []int64{10, 12, 20, 31, 37}}
	m := New(Options{Lister: f, Styles: styles.New(true), Refresh: 10 * time.Millisecond, Now: f.now})
	tm := teatest.NewTestModel(t, program{s: m}, teatest.WithInitialTermSize(120, 40))
	// The last sample (37, which the fake repeats from then on): the mark
	// is raised a poll or two earlier, on a figure the golden does not hold.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("keep growing (37 now)"))
	}, teatest.WithDuration(5*time.Second))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	teatest.RequireEqualOutput(t, []byte(tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()))
}

type program struct{ s common.Screen }

func (p program) Init() tea.Cmd { return p.s.Init() }

func (p program) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		p.s.SetSize(ws.Width, ws.Height)
		return p, nil
	}
	s, cmd := p.s.Update(msg)
	return program{s: s}, cmd
}

func (p program) View() string { return p.s.View() }

type listerFunc func() *domain.ChannelList

func (f listerFunc) Channels(context.Context, string) (*domain.ChannelList, error) { return f(), nil }

// Channels close between two reads: the cursor stays on its channel when
// it is still open, and a shorter list never leaves it past the end.
func TestTheCursorFollowsItsChannelWhenTheListShrinks(t *testing.T) {
	channel := func(conn string) domain.ChannelStat {
		return domain.ChannelStat{Name: conn + " (1)", Connection: conn, Vhost: "shop", Number: 1}
	}
	lists := [][]string{{"a", "b", "c", "d", "e"}, {"b", "d"}, {"a"}}
	calls := 0
	m := New(Options{Styles: styles.New(true), Refresh: time.Hour, Now: func() time.Time { return t0 }, Lister: listerFunc(func() *domain.ChannelList {
		l := &domain.ChannelList{}
		for _, c := range lists[min(calls, len(lists)-1)] {
			l.Channels = append(l.Channels, channel(c))
		}
		calls++
		return l
	})})
	m.SetSize(120, 40)
	m.Update(m.fetch()())
	for range 3 {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	}
	if got := m.selectedName(); got != "d (1)" {
		t.Fatalf("after three j the cursor is on %q, want d (1)", got)
	}
	m.Update(m.fetch()())
	if got := m.selectedName(); got != "d (1)" {
		t.Fatalf("after b and d stayed open the cursor is on %q, want d (1)", got)
	}
	m.Update(m.fetch()())
	if got := m.selectedName(); got != "a (1)" || !strings.Contains(m.View(), "> a ") {
		t.Fatalf("with one channel left the cursor is on %q:\n%s", got, m.View())
	}
}

// On an 80-column terminal the channel's number stays, so the channels
// of one connection still read apart; the user gives way first.
func TestAnEightyColumnScreenKeepsTheChannelNumber(t *testing.T) {
	m := newScreen(&fakeLister{pending: []int64{5}})
	m.SetSize(80, 30)
	poll(t, m, 1)
	v := m.View()
	head := ""
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "CONNECTION") {
			head = l
		}
	}
	if !strings.Contains(head, " CH ") || strings.Contains(head, "USER") {
		t.Errorf("the header at 80 columns: %q", head)
	}
}

// staticLister answers with the same list every time.
type staticLister struct{ l domain.ChannelList }

func (s staticLister) Channels(context.Context, string) (*domain.ChannelList, error) {
	l := s.l
	l.Channels = append([]domain.ChannelStat(nil), s.l.Channels...)
	return &l, nil
}

// A connection the broker blocks (a resource alarm) or slows (flow
// control) is counted in the summary and marked, and the note under the
// cursor says what holds it back; a running one is neither.
func TestAConnectionTheBrokerHoldsBackIsMarked(t *testing.T) {
	list := domain.ChannelList{Channels: []domain.ChannelStat{
		{Name: "a (1)", Connection: "order-gateway", Vhost: "shop", Number: 1, Confirm: ptr(true), Unconfirmed: ptr(int64(900)), ConnectionState: "blocked"},
		{Name: "b (1)", Connection: "importer", Vhost: "shop", Number: 1, Confirm: ptr(true), Unconfirmed: ptr(int64(10)), ConnectionState: "flow"},
		{Name: "c (1)", Connection: "billing-worker", Vhost: "shop", Number: 1, ConnectionState: "running"},
	}}
	m := New(Options{Lister: staticLister{list}, Styles: styles.New(true), Refresh: 10 * time.Millisecond, Now: func() time.Time { return t0 }})
	m.SetSize(160, 40)
	poll(t, m, 1)
	v := m.View()
	for _, want := range []string{"2 held back by the broker", "~ order-gateway: blocked by the broker: a memory or disk alarm stops its publishes"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if v := m.View(); !strings.Contains(v, "~ importer: in flow control") {
		t.Errorf("the note under the flow-controlled connection:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if v := m.View(); strings.Contains(v, "~ billing-worker") {
		t.Errorf("a running connection is marked:\n%s", v)
	}
}
