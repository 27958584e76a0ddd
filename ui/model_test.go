package ui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/channels"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/effect"
	"github.com/warrenops/warren/ui/overview"
	"github.com/warrenops/warren/ui/queuedetail"
	"github.com/warrenops/warren/ui/styles"
)

// screen is a fake screen that records what the root does to it.
type screen struct {
	title     string
	capturing bool
	got       []tea.Msg
	closed    *int
	w, h      int
}

func (s *screen) Init() tea.Cmd { return nil }
func (s *screen) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	s.got = append(s.got, msg)
	return s, nil
}
func (s *screen) View() string           { return "screen " + s.title }
func (s *screen) SetSize(w, h int)       { s.w, s.h = w, h }
func (s *screen) Title() string          { return s.title }
func (s *screen) Keys() help.KeyMap      { return noKeys{} }
func (s *screen) Capturing() bool        { return s.capturing }
func (s *screen) Close() tea.Cmd         { *s.closed++; return nil }
func (noKeys) ShortHelp() []key.Binding  { return nil }
func (noKeys) FullHelp() [][]key.Binding { return nil }

type noKeys struct{}

type ping struct{}

func newRoot(o Options) Model {
	st := styles.New(true)
	o.Styles, o.Now = &st, fixedNow
	if o.Overview == nil {
		o = wired(o, &fakeBroker{}, nil, nil)
	}
	m := New(o)
	next, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return next.(Model)
}

// wired gives o the overview and the queue and channels screens over the
// fakes, as the composition root wires them over the broker.
func wired(o Options, l overview.QueueLister, d queuedetail.QueueDescriber, e effect.Reader) Options {
	st := styles.New(true)
	if o.Styles != nil {
		st = *o.Styles
	}
	now := o.Now
	if now == nil {
		now = fixedNow
	}
	o.Overview = overview.New(overview.Options{Lister: l, Styles: st, Refresh: o.Refresh, Vhost: o.Vhost, Effects: e})
	if d != nil {
		o.NewQueue = func(ref domain.QueueRef) common.Screen {
			return queuedetail.New(queuedetail.Options{Queue: ref, Describer: d, Styles: st, Refresh: o.Refresh, Now: now, Effects: e})
		}
	}
	if o.Channels != nil {
		o.NewChannels = func() common.Screen {
			return channels.New(channels.Options{Lister: o.Channels, Vhost: o.Vhost, Refresh: o.Refresh, Styles: st, Now: now})
		}
	}
	return o
}

func step(t *testing.T, m Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	next, cmd := m.Update(msg)
	return next.(Model), cmd
}

func press(s string) tea.KeyMsg {
	switch s {
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// quits reports whether cmd ends the program: tea.Quit alone or last in
// a sequence.
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	msg := cmd()
	if _, ok := msg.(tea.QuitMsg); ok {
		return true
	}
	// tea.Sequence's message is unexported; run its commands in order.
	seq, ok := asCmds(msg)
	if !ok || len(seq) == 0 {
		return false
	}
	return quits(seq[len(seq)-1])
}

func TestNavigationMessagesManageTheStack(t *testing.T) {
	closed := 0
	dlq := &screen{title: "dlq", closed: &closed}
	var asked domain.QueueRef
	m := newRoot(Options{NewDLQ: func(r domain.QueueRef) common.Screen { asked = r; return dlq }})

	ref := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	m, _ = step(t, m, common.OpenDLQMsg{Queue: ref})
	if asked != ref || m.top() != common.Screen(dlq) {
		t.Fatalf("OpenDLQMsg did not open the DLQ screen for %v", ref)
	}
	if dlq.w != 120 || dlq.h != 40-headerLines-footerLines {
		t.Fatalf("pushed screen sized %dx%d", dlq.w, dlq.h)
	}
	if !strings.Contains(m.View(), "Queues › dlq") {
		t.Fatalf("breadcrumb missing:\n%s", m.View())
	}
	m, _ = step(t, m, press("esc"))
	if len(m.stack) != 0 || closed != 1 {
		t.Fatalf("esc must pop and close: stack %d closed %d", len(m.stack), closed)
	}
	m, _ = step(t, m, press("esc"))
	if closed != 1 {
		t.Fatal("esc on the overview must not close anything")
	}
	other := &screen{title: "pushed", closed: &closed}
	m, _ = step(t, m, common.PushMsg{Screen: other})
	m, _ = step(t, m, common.PopMsg{})
	if len(m.stack) != 0 || closed != 2 {
		t.Fatalf("PopMsg must pop and close: stack %d closed %d", len(m.stack), closed)
	}
}

func TestOpenQueueMsgPushesTheQueueScreen(t *testing.T) {
	f := &fakeBroker{}
	m := newRoot(wired(Options{}, f, f, nil))
	m, cmd := step(t, m, common.OpenQueueMsg{Queue: domain.QueueRef{Vhost: "/", Name: "orders"}})
	if _, ok := m.top().(*queuedetail.Model); !ok || cmd == nil {
		t.Fatalf("top is %T, want the queue screen fetching", m.top())
	}
}

func TestMissingScreensReportAnError(t *testing.T) {
	tests := []struct {
		name string
		msg  tea.Msg
		want string
	}{
		{name: "DLQ", msg: common.OpenDLQMsg{}, want: "DLQ screen is not available"},
		{name: "message", msg: common.OpenMessageMsg{}, want: "message inspector is not available"},
		{name: "audit", msg: common.OpenAuditMsg{}, want: "audit screen is not available"},
		{name: "queue", msg: common.OpenQueueMsg{}, want: "queue screen is not available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := step(t, newRoot(Options{}), tt.msg)
			if len(m.stack) != 0 || !m.footer.isErr || !strings.Contains(m.footer.text, tt.want) {
				t.Fatalf("footer = %+v, want error %q", m.footer, tt.want)
			}
		})
	}
}

func TestFooterLineIsClearedByTheNextKey(t *testing.T) {
	m := newRoot(Options{})
	m, _ = step(t, m, common.ErrorMsg{Err: errors.New("replay of orders.dlq failed: \x1b[31mboom")})
	view := m.View()
	if !strings.Contains(view, `replay of orders.dlq failed: \x1b[31mboom`) {
		t.Fatalf("error line missing or not sanitised:\n%s", view)
	}
	m, _ = step(t, m, press("j"))
	if m.footer.text != "" {
		t.Fatal("a key must clear the error line")
	}
	m, _ = step(t, m, common.InfoMsg{Text: "37 messages replayed"})
	if m.footer.isErr || m.footer.text != "37 messages replayed" {
		t.Fatalf("info line = %+v", m.footer)
	}
}

func TestGlobalKeysRespectCapturingScreens(t *testing.T) {
	closed := 0
	typing := &screen{title: "typing", capturing: true, closed: &closed}
	m := newRoot(Options{})
	m, _ = step(t, m, common.PushMsg{Screen: typing})
	for _, k := range []string{"q", "?", "A", "esc"} {
		var cmd tea.Cmd
		m, cmd = step(t, m, press(k))
		if quits(cmd) || m.showHelp || len(m.stack) != 1 {
			t.Fatalf("%q acted globally while the screen captures text", k)
		}
	}
	if len(typing.got) != 4 {
		t.Fatalf("capturing screen got %d keys, want 4", len(typing.got))
	}
	// The keys' help offers none of what the root would not do now.
	if last := ansi.Strip(m.View()); strings.Contains(last[strings.LastIndex(last, "\n"):], "quit") || strings.Contains(last[strings.LastIndex(last, "\n"):], "back") {
		t.Fatalf("while the screen captures, the help line offers the root's keys: %q", last[strings.LastIndex(last, "\n"):])
	}
	_, cmd := step(t, m, press("ctrl+c"))
	if !quits(cmd) || closed != 1 {
		t.Fatalf("ctrl+c must close screens and quit even while capturing (closed %d)", closed)
	}
}

func TestGlobalKeys(t *testing.T) {
	m := newRoot(Options{NewAudit: func() common.Screen { return &screen{title: "audit", closed: new(int)} }})
	m, _ = step(t, m, press("?"))
	if !m.showHelp || !strings.Contains(m.View(), "next vhost") {
		t.Fatal("? must show the full help of the current screen")
	}
	m, _ = step(t, m, press("x"))
	if m.showHelp {
		t.Fatal("any key must close the help")
	}
	m, cmd := step(t, m, press("A"))
	m, _ = step(t, m, cmd())
	if m.top().Title() != "audit" {
		t.Fatal("A must open the audit screen")
	}
	if _, cmd := step(t, m, press("q")); !quits(cmd) {
		t.Fatal("q must quit")
	}
}

func TestKeysGoToTheTopAndOtherMessagesToEveryScreen(t *testing.T) {
	lower := &screen{title: "lower", closed: new(int)}
	upper := &screen{title: "upper", closed: new(int)}
	m := newRoot(Options{})
	m, _ = step(t, m, common.PushMsg{Screen: lower})
	m, _ = step(t, m, common.PushMsg{Screen: upper})
	m, _ = step(t, m, press("j"))
	step(t, m, ping{})
	if len(lower.got) != 1 || len(upper.got) != 2 {
		t.Fatalf("lower got %v, upper got %v", lower.got, upper.got)
	}
	if _, ok := lower.got[0].(ping); !ok {
		t.Fatal("the lower screen must get the non-key message")
	}
}

func TestOverviewKeepsPollingUnderAnotherScreen(t *testing.T) {
	f := &fakeBroker{}
	m := newRoot(wired(Options{Refresh: time.Nanosecond}, f, nil, nil))
	m, cmd := step(t, m, m.Init()())
	m, _ = step(t, m, common.PushMsg{Screen: &screen{title: "top", closed: new(int)}})
	// cmd is the overview's refetch (rates for the visible rows) or its tick.
	for range 3 {
		m, cmd = step(t, m, cmd())
	}
	if len(f.calls) < 3 {
		t.Fatalf("the overview fetched %d times under another screen, want at least 3", len(f.calls))
	}
}

func TestHeaderShowsGuardrailsAndBrokerHealth(t *testing.T) {
	f := &fakeBroker{}
	m := newRoot(wired(Options{Context: "prod-eu", Environment: "prod", ReadOnly: true, InsecureTLS: true}, f, nil, nil))
	m, _ = step(t, m, m.Init()())
	head := strings.Join(strings.Split(m.View(), "\n")[:2], "\n")
	for _, want := range []string{"prod-eu", "PRODUCTION", "READ-ONLY", "TLS NOT VERIFIED", "RabbitMQ 3.13.7", "nodes 2/2 running", "no alarms", "messages 18390", "stats 7s old"} {
		if !strings.Contains(head, want) {
			t.Fatalf("header lacks %q:\n%s", want, head)
		}
	}
}

func TestHeaderSaysWhenThereIsNoConfig(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string
		not  []string
	}{
		{"local broker", Options{Context: "local broker", NoConfig: true}, "warren no config: local broker", nil},
		{"one-off target", Options{Context: "rabbit-b:15672", NoConfig: true}, "warren no config: rabbit-b:15672", nil},
		{"a configured context", Options{Context: "prod-eu", Environment: "prod"}, "warren prod-eu", []string{"no config"}},
		{"a hostile target is sanitised", Options{Context: "h\x1b[2Jx:15672", NoConfig: true}, "no config: h\\x1b[2Jx:15672", nil},
		{"a working directory's config ignored", Options{Context: "local broker", NoConfig: true, Ignored: []string{"./warren.toml ignored: not trusted"}},
			"warren no config: local broker ./warren.toml ignored: not trusted", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newRoot(tc.o)
			m, _ = step(t, m, m.Init()())
			head := strings.Split(m.View(), "\n")[0]
			if !strings.Contains(head, tc.want) {
				t.Fatalf("header lacks %q:\n%s", tc.want, head)
			}
			for _, not := range tc.not {
				if strings.Contains(head, not) {
					t.Fatalf("header has %q:\n%s", not, head)
				}
			}
			if !strings.Contains(head, "RabbitMQ 3.13.7") {
				t.Fatalf("header lost the broker's version:\n%s", head)
			}
		})
	}
}

func TestHeaderShowsAlarms(t *testing.T) {
	m := newRoot(Options{})
	nodes := []domain.Node{{Name: "rabbit@a", Running: true, MemAlarm: true}, {Name: "rabbit@b"}}
	got := m.nodes(nodes)
	for _, want := range []string{"nodes 1/2 running", "ALARM: memory on rabbit@a"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q lacks %q", got, want)
		}
	}
}

func TestTooSmallTerminalSaysSo(t *testing.T) {
	m := newRoot(Options{})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 60, Height: 10})
	if !strings.Contains(m.View(), "terminal too small") {
		t.Fatal("a tiny terminal must be told why nothing shows")
	}
}

// Below the smallest size nothing but the size is drawn, so no key acts
// on a screen or a question the operator cannot see; q still quits, and
// the keys act again once the terminal is large enough.
func TestKeysWaitWhileTheTerminalIsTooSmall(t *testing.T) {
	lower := &screen{title: "lower", closed: new(int)}
	m := newRoot(Options{})
	m, _ = step(t, m, common.PushMsg{Screen: lower})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 60, Height: 20})
	m, _ = step(t, m, press("y"))
	m, _ = step(t, m, press("esc"))
	if len(lower.keys()) != 0 || m.top() != common.Screen(lower) {
		t.Fatalf("keys reached a screen the terminal does not show: %v, top %s", lower.keys(), m.top().Title())
	}
	if v := m.View(); !strings.Contains(v, "keys wait for a terminal of 80×10 or more; q quits") {
		t.Errorf("the foot does not say why the keys wait:\n%s", v)
	}
	if _, cmd := step(t, m, press("q")); !quits(cmd) {
		t.Error("q does not quit a terminal too small")
	}
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m, _ = step(t, m, press("y"))
	if got := lower.keys(); len(got) != 1 {
		t.Errorf("once large enough the screen got %v, want the y", got)
	}
}

func TestDebugLogRecordsEveryMessageWithoutSecrets(t *testing.T) {
	var log strings.Builder
	m := newRoot(Options{Debug: &log})
	m, _ = step(t, m, press("j"))
	step(t, m, common.ErrorMsg{Err: errors.New("GET http://guest:s3cret@127.0.0.1:15672/api failed")})
	got := log.String()
	for _, want := range []string{"tea.WindowSizeMsg", `tea.KeyMsg {key "j"}`, "common.ErrorMsg", "REDACTED@127.0.0.1"} {
		if !strings.Contains(got, want) {
			t.Fatalf("debug log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "s3cret") {
		t.Fatalf("debug log leaks the password:\n%s", got)
	}
}

// Keys typed or repeated faster than the terminal is read arrive as one
// message of several runes: each must act, in order, as if alone.
func TestKeysArrivingTogetherActOneByOne(t *testing.T) {
	loaded := func() Model {
		m := newRoot(Options{})
		m, _ = step(t, m, m.Init()())
		return m
	}
	m := loaded()
	first, _ := m.overview.Selected()
	for range 2 {
		m, _ = step(t, m, press("j"))
	}
	want, ok := m.overview.Selected()
	if !ok || want.Name == first.Name {
		t.Fatal("two presses of j did not move the overview's cursor")
	}
	m, _ = step(t, loaded(), press("jj"))
	if got, _ := m.overview.Selected(); got.Name != want.Name {
		t.Fatalf(`"jj" in one read selected %q, want %q as two presses of j do`, got.Name, want.Name)
	}

	top := &screen{title: "top", closed: new(int)}
	m, _ = step(t, m, common.PushMsg{Screen: top})
	if m, _ = step(t, m, press("?x")); m.showHelp {
		t.Fatal(`"?x": the x must close the help the ? opened`)
	}
	if _, cmd := step(t, m, press("kq")); !quits(cmd) {
		t.Fatal(`"kq" must quit, as k then q does`)
	}
	upper := &screen{title: "upper", closed: new(int)}
	m, _ = step(t, m, common.PushMsg{Screen: upper})
	if m2, _ := step(t, m, tea.KeyMsg{Type: tea.KeyEsc, Alt: true}); len(m2.stack) != 0 {
		t.Fatalf("two escs in one read (alt+esc) left %d screens open, want both closed", len(m2.stack))
	}

	typing := &screen{title: "typing", capturing: true, closed: new(int)}
	m, _ = step(t, m, common.PushMsg{Screen: typing})
	m, _ = step(t, m, press("ab"))
	if len(typing.got) != 2 || typing.got[0].(tea.KeyMsg).String() != "a" || typing.got[1].(tea.KeyMsg).String() != "b" {
		t.Fatalf(`"ab" in one read reached the text field as %v, want a then b`, typing.got)
	}
	paste := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("qq"), Paste: true}
	if _, cmd := step(t, m, paste); cmd != nil && quits(cmd) || len(typing.got) != 3 || typing.got[2].(tea.KeyMsg).String() != "[qq]" {
		t.Fatalf("a paste must reach the text field whole, got %v", typing.got)
	}
}

// escScreen takes esc for itself (a view inside it is open) but no text.
type escScreen struct{ screen }

func (s *escScreen) HandlesEsc() bool { return true }

func TestAScreenThatTakesEscLeavesTheOtherGlobalKeys(t *testing.T) {
	s := &escScreen{screen{title: "groups open", closed: new(int)}}
	m := newRoot(Options{})
	m, _ = step(t, m, common.PushMsg{Screen: s})
	m, _ = step(t, m, press("esc"))
	if len(m.stack) != 1 || len(s.got) != 1 {
		t.Fatalf("esc closed the screen (stack %d) instead of reaching it (%d keys)", len(m.stack), len(s.got))
	}
	m, _ = step(t, m, press("?"))
	if !m.showHelp {
		t.Fatal("? must still show the help")
	}
	m, _ = step(t, m, press("x"))
	if _, cmd := step(t, m, press("q")); !quits(cmd) {
		t.Fatal("q must still quit")
	}
}

// An error longer than the line is said whole, on up to three lines
// over the bottom of the body, and the screen keeps its height.
func TestALongErrorIsSaidWholeAtTheFoot(t *testing.T) {
	m := newRoot(Options{Context: "prod-eu"})
	long := "replay of orders.dlq failed: --rate auto: no consumer sets the pace: orders has no consumer, so nothing says how fast it can take the copies; start its consumers, or pass --rate N"
	next, _ := m.fail(errors.New(long))
	m = next.(Model)
	for _, width := range []int{120, 80} {
		next, _ = m.Update(tea.WindowSizeMsg{Width: width, Height: 30})
		m = next.(Model)
		v := ansi.Strip(m.View())
		if got := strings.Count(v, "\n") + 1; got != 30 {
			t.Fatalf("at %d columns the view is %d lines on 30", width, got)
		}
		if !strings.Contains(strings.Join(strings.Fields(v), " "), long) {
			t.Fatalf("at %d columns the error is not whole:\n%s", width, v)
		}
	}
	// A key clears it; the body has its lines back.
	next, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if v := ansi.Strip(next.(Model).View()); strings.Contains(v, "no consumer sets the pace") {
		t.Fatalf("the error stayed after a key:\n%s", v)
	}
}

// An error made of parts sanitised where they were made (a queue name
// with an escape) is not escaped again at the foot, and what arrives raw
// reaches the terminal as text.
func TestTheFootEscapesNothingTwice(t *testing.T) {
	m := newRoot(Options{Context: "prod-eu"})
	next, _ := m.fail(errors.New(`replay of evil\x1b[31m.q failed: ` + "raw \x1b[2J"))
	v := next.(Model).View()
	if !strings.Contains(v, `evil\x1b[31m.q failed: raw \x1b[2J`) || strings.Contains(v, `\\x1b`) || strings.Contains(v, "\x1b[2J") {
		t.Fatalf("the foot: %q", v[strings.LastIndex(v, "replay"):])
	}
}

// keys are the key messages the screen got.
func (s *screen) keys() []tea.KeyMsg {
	var out []tea.KeyMsg
	for _, m := range s.got {
		if k, ok := m.(tea.KeyMsg); ok {
			out = append(out, k)
		}
	}
	return out
}

// On an 80-column terminal the help lays its columns out in rows, so
// the root's keys, which come last, are shown, not cut to "…".
func TestTheHelpShowsEveryColumnOnANarrowTerminal(t *testing.T) {
	m := newRoot(Options{NewAudit: func() common.Screen { return &screen{title: "audit", closed: new(int)} }})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 80, Height: 40})
	m, _ = step(t, m, press("?"))
	v := m.View()
	for _, want := range []string{"audit", "quit", "next vhost"} {
		if !strings.Contains(v, want) {
			t.Errorf("the help at 80 columns lacks %q:\n%s", want, v)
		}
	}
	lines := strings.Split(v, "\n")
	for i, l := range lines[headerLines : len(lines)-1] { // the short help at the foot may cut
		if w := lipgloss.Width(l); w > 80 || strings.HasSuffix(strings.TrimSpace(l), "…") {
			t.Errorf("help line %d is %d wide or cut: %q", i, w, l)
		}
	}
}
