package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/styles"
)

// clusterBroker is the fake broker with a node that can be stopped.
type clusterBroker struct {
	fakeBroker
	mu      sync.Mutex
	stopped string
}

func (c *clusterBroker) stop(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = node
}

func (c *clusterBroker) Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	s, err := c.fakeBroker.Snapshot(ctx, o)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Nodes = []domain.Node{{Name: "rabbit@node1", Running: true}, {Name: "rabbit@node2", Running: true}, {Name: "rabbit@node3", Running: true}}
	for i := range s.Nodes {
		if s.Nodes[i].Name == c.stopped {
			s.Nodes[i].Running = false
		}
	}
	return s, nil
}

func TestHeaderNamesTheNodesDown(t *testing.T) {
	m := newRoot(Options{})
	got := m.nodes([]domain.Node{{Name: "rabbit@a", Running: true}, {Name: "rabbit@b\x1b[2J"}, {Name: "rabbit@c"}})
	if !strings.Contains(got, "nodes 1/3 running (down: rabbit@b") || !strings.Contains(got, ", rabbit@c)") {
		t.Errorf("header %q does not name both nodes down", got)
	}
	if strings.Contains(got, "\x1b[2J") {
		t.Errorf("a node name from the broker reached the screen unsanitised: %q", got)
	}
	if got := m.nodes([]domain.Node{{Name: "rabbit@a", Running: true}}); strings.Contains(got, "down") {
		t.Errorf("every node runs, yet %q", got)
	}
}

// A node that stops is shown down at the next refresh, and running again
// at the refresh after it returns.
func TestHeaderShowsANodeDownWithinOneRefreshAndBackUp(t *testing.T) {
	b := &clusterBroker{}
	st := styles.New(true)
	m := New(wired(Options{Context: "prod-eu", Refresh: 20 * time.Millisecond, Styles: &st, Now: fixedNow}, b, b, nil))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "nodes 3/3 running")
	b.stop("rabbit@node2")
	waitFor(t, tm, "nodes 2/3 running (down: rabbit@node2)")
	b.stop("")
	waitFor(t, tm, "nodes 3/3 running")
	if view := string(finalView(t, tm)); !strings.Contains(view, "nodes 3/3 running · no alarms") {
		t.Fatalf("the node came back but the header says:\n%s", view)
	}
}

// The figures read through a fallback node say so, with the node the
// config names first; the broker's text is sanitised.
func TestTheStatusLineSaysAFallbackNodeAnswers(t *testing.T) {
	m := newRoot(Options{})
	got := m.via(domain.Overview{Via: "http://rabbit-2:15672", First: "http://rabbit-1:15672", Missed: "connection refused\x1b[2J"}, true)
	if !strings.Contains(got, "via fallback rabbit-2:15672 (rabbit-1:15672 did not answer)") {
		t.Errorf("status line part %q does not name the fallback and the first node", got)
	}
	if got := m.via(domain.Overview{}, true); got != "" {
		t.Errorf("the first node answers, yet %q", got)
	}
	if got := m.via(domain.Overview{Via: "http://b/\x1b]52;c;eA==\x07", First: "http://a"}, true); strings.ContainsAny(got, "\x07") || strings.Contains(got, "\x1b]") {
		t.Errorf("a URL reached the screen unsanitised: %q", got)
	}
}

// fallbackBroker is the fake broker read through a fallback node.
type fallbackBroker struct{ clusterBroker }

func (f *fallbackBroker) Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	s, err := f.clusterBroker.Snapshot(ctx, o)
	if err != nil {
		return nil, err
	}
	s.Overview.Via, s.Overview.First, s.Overview.Missed = "http://rabbit-2.example:15672", "http://rabbit-1.example:15672", "connection refused"
	return s, nil
}

// On 80 columns the status line keeps saying a fallback answers, and
// the age of the figures, giving up why the first node did not, and then
// the end of the nodes' part: the age says whether the rest can be
// trusted.
func TestANarrowStatusLineKeepsTheFallbackAndTheAge(t *testing.T) {
	b := &fallbackBroker{}
	b.stop("rabbit@node1")
	st := styles.New(true)
	m := New(wired(Options{Context: "prod-eu", Refresh: 20 * time.Millisecond, Styles: &st, Now: fixedNow}, b, b, nil))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 40))
	waitFor(t, tm, "via fallback rabbit-2.example:15672 (rabbit-1.example:15672 did not answer)")
	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	waitFor(t, tm, "stats 7s old")
	view := string(finalView(t, tm))
	line := strings.Split(view, "\n")[1]
	if !strings.Contains(line, "via fallback") || !strings.HasSuffix(strings.TrimRight(line, " "), " old") {
		t.Fatalf("the status line on 80 columns lost the fallback or the age: %q", line)
	}
}
