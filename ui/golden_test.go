package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/styles"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func goldenModel(f *fakeBroker, refresh time.Duration) Model {
	st := styles.New(true)
	return New(wired(Options{
		Context: "prod-eu", Environment: "prod", ReadOnly: true, Refresh: refresh,
		Styles: &st, Now: fixedNow,
	}, f, f, nil))
}

func waitFor(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

func finalView(t *testing.T, tm *teatest.TestModel) []byte {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return []byte(tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View())
}

func TestOverviewGolden(t *testing.T) {
	tm := teatest.NewTestModel(t, goldenModel(&fakeBroker{}, time.Hour), teatest.WithInitialTermSize(120, 40))
	// Rates arrive with the second snapshot, which asks for the rows on screen.
	waitFor(t, tm, "ETA")
	golden.RequireEqual(t, finalView(t, tm))
}

func TestNoConfigOverviewGolden(t *testing.T) {
	st := styles.New(true)
	m := New(wired(Options{Context: "local broker", NoConfig: true, Refresh: time.Hour,
		Styles: &st, Now: fixedNow}, &fakeBroker{}, &fakeBroker{}, nil))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "ETA")
	golden.RequireEqual(t, finalView(t, tm))
}

func TestQueueScreenGolden(t *testing.T) {
	tm := teatest.NewTestModel(t, goldenModel(&fakeBroker{}, time.Hour), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "ETA")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "Topology")
	golden.RequireEqual(t, finalView(t, tm))
}

func TestBrokerDownShowsDisconnectedAndRecovers(t *testing.T) {
	f := &fakeBroker{}
	f.setDown(errUnreachable())
	tm := teatest.NewTestModel(t, goldenModel(f, 20*time.Millisecond), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "disconnected, retrying")
	f.setDown(nil)
	waitFor(t, tm, "no alarms")
	view := string(finalView(t, tm))
	if strings.Contains(view, "disconnected") || !strings.Contains(view, "orders") {
		t.Fatalf("did not recover:\n%s", view)
	}
}

// A broker lost after figures were shown: the status line says how old
// they are before the error, which is longer than an 80-column line.
func TestABrokerLostSaysHowOldTheFiguresAreFirst(t *testing.T) {
	f := &fakeBroker{}
	tm := teatest.NewTestModel(t, goldenModel(f, 20*time.Millisecond), teatest.WithInitialTermSize(80, 30))
	waitFor(t, tm, "no alarms")
	f.setDown(&domain.Error{Kind: domain.ErrUnreachable, Msg: "management API at http://rabbit-eu-central-1.internal.example:15672 unreachable: dial tcp 10.20.30.40:15672: connect: connection refused; is the management plugin enabled?"})
	waitFor(t, tm, "figures below are")
	f.setDown(nil)
	waitFor(t, tm, "no alarms")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(3*time.Second))
}

// At 80 columns the status line gives up the split of the messages
// before the age of the figures, which says whether to trust the rest.
func TestANarrowTerminalKeepsTheAgeOfTheFigures(t *testing.T) {
	tm := teatest.NewTestModel(t, goldenModel(&fakeBroker{}, time.Hour), teatest.WithInitialTermSize(80, 30))
	waitFor(t, tm, "ETA")
	view := string(finalView(t, tm))
	line := strings.Split(view, "\n")[1]
	if !strings.Contains(line, "stats 7s old") || !strings.Contains(line, "messages 18390") || strings.Contains(line, "unacked") {
		t.Fatalf("the status line at 80 columns: %q", line)
	}
}
