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

func (f fakeReader) ReadAll(context.Context, time.Duration) []domain.FleetRow { return f.rows }

func TestTheFleetShowsEveryContextAndOpensOne(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	old := now.Add(-90 * time.Minute)
	r := fakeReader{rows: []domain.FleetRow{
		{Context: "prod-eu", Environment: "prod", Cluster: "rabbit@eu", Version: "4.3.6", NodesRunning: 3, Nodes: 3, Alarms: []string{},
			Queues: 40, InTrouble: 1, WorthALook: 2, DLQMessages: 1200, Growth: 37, DeepestDLQ: "/orders.dlq", DeepestMessages: 1100, OldestDeadLetter: &old, ReadAt: now},
		{Context: "staging", Environment: "staging", Err: "no answer within the timeout: dial tcp 10.0.0.9:15672: i/o timeout"},
		{Context: "dev\x1b[2J", Cluster: "rabbit@dev", Version: "3.10.8", NodesRunning: 1, Nodes: 1, Alarms: []string{}, ReadAt: now},
	}}
	m := New(Options{Reader: r, Timeout: 8 * time.Second, Styles: styles.New(true), Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 20})
	msg := m.Init()()
	if _, cmd := m.Update(msg); cmd == nil {
		t.Fatal("no next read scheduled")
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
		m.Update(m.Init()())
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

// On a terminal too narrow for every column, the cluster and the
// version go first and the names shrink; what the view is for — dead
// letters, their growth, the deepest DLQ's depth, the oldest — stays.
func TestANarrowTerminalKeepsTheDeadLetters(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	old := now.Add(-90 * time.Minute)
	r := fakeReader{rows: []domain.FleetRow{
		{Context: "prod-eu-central-1", Environment: "prod", Cluster: "rabbit@eu-central", Version: "4.3.6", NodesRunning: 3, Nodes: 3,
			InTrouble: 1, WorthALook: 2, DLQMessages: 1200, Growth: 37, DeepestDLQ: "payments/orders.dlq", DeepestMessages: 1100, OldestDeadLetter: &old, ReadAt: now},
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
		m.Update(m.Init()())
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
