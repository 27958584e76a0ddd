package overview

import (
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"

	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/ui/components/effect"
	"github.com/warrenops/warren/ui/components/table"
)

// effects is a fake inbox: the queues named in inboxes have one, with the
// given answer or err.
type effects struct {
	mu      sync.Mutex
	inboxes map[string]domain.Effect
	err     error
	asked   []string
}

func (f *effects) HasInbox(ref domain.QueueRef) bool {
	_, ok := f.inboxes[ref.Name]
	return ok
}

func (f *effects) Effect(_ context.Context, ref domain.QueueRef, window time.Duration) (domain.Effect, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, ref.Name)
	if f.err != nil {
		return domain.Effect{}, f.err
	}
	e := f.inboxes[ref.Name]
	e.Window = window
	return e, nil
}

func withEffects(l *lister, f *effects) *Model {
	m := New(Options{Lister: l, Styles: newModel(l).st, Refresh: time.Nanosecond, Effects: f})
	m.SetSize(120, 8)
	return m
}

// header is the table's title line.
func header(m *Model) string { return strings.Split(m.View(), "\n")[1] }

func TestEffectsAreReadForVisibleRowsWithAnInboxOnly(t *testing.T) {
	var qs []domain.Queue
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		qs = append(qs, queue("/", name, int64(100-len(qs))))
	}
	f := &effects{inboxes: map[string]domain.Effect{
		"a": {Count: 120, Rate: 2, Now: taken, Last: taken.Add(-3 * time.Second)},
		"c": {Now: taken},
		"h": {Rate: 9, Now: taken}, // below the screen
	}}
	l := &lister{replies: []reply{{snap: snapshot(qs...)}}}
	m := withEffects(l, f)
	m, cmd := load(t, m, m.Init())
	var got effect.Msg
	for _, c := range batchCmds(t, cmd) {
		if e, ok := c().(effect.Msg); ok {
			got = e
		}
	}
	if names := refNames(got.Refs); !slices.Equal(names, []string{"a", "c"}) {
		t.Fatalf("read the inbox of %v, want the visible rows with one: [a c]", names)
	}
	if _, cmd := update(t, m, snapshotMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}, Opts: l.asked[0], Snap: snapshot(qs...)}); hasEffects(cmd) {
		t.Fatal("a second round started while the first was still running")
	}
	m, _ = update(t, m, got)
	if h := header(m); !strings.Contains(h, "EFF/s") || !strings.Contains(h, "LAST") {
		t.Fatalf("no effect columns in %q", h)
	}
	row := m.renderRow(0)
	if rate, last := cellOf(m, row, colEffect), cellOf(m, row, colLast); rate != "2.0" || last != "3s" {
		t.Fatalf("row a shows %q %q, want 2.0 and 3s", rate, last)
	}
	if note := m.note(); !strings.Contains(note, "inbox: 2.0 effects/s over the last 1m, last 3s ago") {
		t.Fatalf("note = %q", note)
	}
	if last := cellOf(m, m.renderRow(2), colLast); last != "never" {
		t.Fatalf("an inbox without effects shows %q, want never", last)
	}
	if rate := cellOf(m, m.renderRow(1), colEffect); rate != "" {
		t.Fatalf("a queue without an inbox shows %q, want nothing", rate)
	}
}

func TestEffectsUnknownWhenTheDatabaseIsDown(t *testing.T) {
	f := &effects{inboxes: map[string]domain.Effect{"a": {}}, err: errors.New("cannot reach PostgreSQL at 127.0.0.1:5432")}
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1))}}}
	m := withEffects(l, f)
	m, cmd := load(t, m, m.Init())
	if note := m.note(); !strings.Contains(note, "reading the inbox") {
		t.Fatalf("before the answer the note says %q", note)
	}
	for _, c := range batchCmds(t, cmd) {
		if e, ok := c().(effect.Msg); ok {
			m, _ = update(t, m, e)
		}
	}
	if rate := cellOf(m, m.renderRow(0), colEffect); rate != "—" {
		t.Fatalf("rate cell = %q, want — (the note says why)", rate)
	}
	if note := m.note(); !strings.Contains(note, "inbox effects unknown (cannot reach PostgreSQL at 127.0.0.1:5432)") {
		t.Fatalf("note = %q", note)
	}
	if m.Status().Err != nil || len(m.rows) != 1 {
		t.Fatal("an inbox failure must not touch the broker's figures")
	}
}

func TestNoInboxNoEffectColumns(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1))}}}
	m := withEffects(l, &effects{})
	m, cmd := load(t, m, m.Init())
	if h := header(m); strings.Contains(h, "EFF/s") {
		t.Fatalf("effect columns without any inbox: %q", h)
	}
	if hasEffects(cmd) {
		t.Fatal("an inbox round without any inbox")
	}
}

func TestEffectsOfAnotherOverviewAreIgnored(t *testing.T) {
	f := &effects{inboxes: map[string]domain.Effect{"a": {Rate: 1, Now: taken}}}
	l := &lister{replies: []reply{{snap: snapshot(queue("/", "a", 1))}}}
	m := withEffects(l, f)
	m, _ = load(t, m, m.Init())
	other := effect.New(f)
	m, _ = update(t, m, other.Fetch([]domain.QueueRef{{Vhost: "/", Name: "a"}})())
	if len(m.effects) != 0 {
		t.Fatal("another overview's answer was kept")
	}
}

func refNames(refs []domain.QueueRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

func cellOf(m *Model, r table.Row, c col) string {
	i := slices.Index(m.cols, c)
	if i < 0 {
		return "(no column)"
	}
	return r.Cells[i].Text
}

func batchCmds(t *testing.T, cmd tea.Cmd) []tea.Cmd {
	t.Helper()
	if cmd == nil {
		return nil
	}
	if b, ok := cmd().(tea.BatchMsg); ok {
		return b
	}
	return []tea.Cmd{cmd}
}

func hasEffects(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case effect.Msg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if hasEffects(c) {
				return true
			}
		}
	}
	return false
}

func TestEffectColumnsGoLastOnNarrowTerminals(t *testing.T) {
	q := queue("tenant-with-a-long-name", "a-queue-name-that-is-much-too-long-to-fit", 123456)
	f := &effects{inboxes: map[string]domain.Effect{q.Name: {Rate: 3, Now: taken}}}
	tests := []struct {
		width          int
		rate, last, ty bool
	}{
		{width: 160, rate: true, last: true, ty: true},
		{width: 100, rate: true},
		{width: 80},
	}
	for _, tt := range tests {
		l := &lister{replies: []reply{{snap: snapshot(q)}}}
		m := withEffects(l, f)
		m.SetSize(tt.width, 10)
		m, _ = load(t, m, m.Init())
		shown := func(c col) bool { return m.tbl.Widths()[slices.Index(m.cols, c)] > 0 }
		if shown(colEffect) != tt.rate || shown(colLast) != tt.last || shown(colType) != tt.ty {
			t.Errorf("at %d cells: EFF/s %v LAST %v TYPE %v, want %v %v %v", tt.width,
				shown(colEffect), shown(colLast), shown(colType), tt.rate, tt.last, tt.ty)
		}
		for _, line := range strings.Split(m.View(), "\n") {
			if w := ansi.StringWidth(line); w > tt.width {
				t.Fatalf("at %d cells a line is %d wide: %q", tt.width, w, line)
			}
		}
	}
}

// A DLQ whose source queue shows the same inbox does not show its
// effects again: they are the source's consumer's, and on the DLQ's row
// they would read as if the DLQ were consumed. A DLQ whose sources show
// no inbox keeps its own.
func TestADLQDoesNotRepeatItsSourcesInbox(t *testing.T) {
	orders, lone := queue("/", "orders", 5), queue("/", "lone", 5)
	dlq := queue("/", "orders.dlq", 3)
	dlq.DLQOf = []domain.QueueRef{orders.Ref()}
	other := queue("/", "lone.dlq", 2)
	other.DLQOf = []domain.QueueRef{lone.Ref()}
	f := &effects{inboxes: map[string]domain.Effect{"orders": {Now: taken}, "orders.dlq": {Now: taken}, "lone.dlq": {Now: taken}}}
	m := withEffects(&lister{replies: []reply{{snap: snapshot(orders, dlq, lone, other)}}}, f)
	m, _ = load(t, m, m.Init())
	for _, r := range m.rows {
		want := r.q.Name == "orders" || r.q.Name == "lone.dlq"
		if r.hasInbox != want {
			t.Errorf("%s shows an inbox: %v, want %v", r.q.Name, r.hasInbox, want)
		}
	}
}
