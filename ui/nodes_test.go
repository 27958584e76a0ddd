package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

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
	got := m.via(domain.Overview{Via: "http://rabbit-2:15672", First: "http://rabbit-1:15672", Missed: "connection refused\x1b[2J"})
	if !strings.Contains(got, "via fallback rabbit-2:15672 (rabbit-1:15672 did not answer)") {
		t.Errorf("status line part %q does not name the fallback and the first node", got)
	}
	if got := m.via(domain.Overview{}); got != "" {
		t.Errorf("the first node answers, yet %q", got)
	}
	if got := m.via(domain.Overview{Via: "http://b/\x1b]52;c;eA==\x07", First: "http://a"}); strings.ContainsAny(got, "\x07") || strings.Contains(got, "\x1b]") {
		t.Errorf("a URL reached the screen unsanitised: %q", got)
	}
}
