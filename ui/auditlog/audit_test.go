package auditlog

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

var t0 = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

type fakeReader struct {
	mu      sync.Mutex
	ops     []domain.OperationSummary
	res     ops.Chain
	err     error
	limits  []int
	details map[string]*ops.OperationDetail
}

func (f *fakeReader) Operations(_ context.Context, limit int) ([]domain.OperationSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limits = append(f.limits, limit)
	return f.ops, f.err
}

func (f *fakeReader) Verify(context.Context) (ops.Chain, error) { return f.res, nil }

func (f *fakeReader) Operation(_ context.Context, id string) (*ops.OperationDetail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.details[id]; ok {
		return d, nil
	}
	return nil, errors.New("no operation " + id + " in the audit log")
}

func (f *fakeReader) Describe() string { return "file /var/lib/warren/audit.jsonl" }

func sampleOps() []domain.OperationSummary {
	done := t0.Add(-50 * time.Minute)
	return []domain.OperationSummary{
		{
			Operation: "20240501T020000Z-9f86d081", Action: "replay", Vhost: "/", Queue: "orders.dlq",
			Target: "queue orders", Operator: "alice", Started: t0.Add(-time.Hour), Finished: &done,
			Selected: 37, FirstSeq: 1, LastSeq: 6,
			Counts: map[string]int{"confirmed": 30, "returned": 1, "unknown": 1, "skipped_applied": 5},
		},
		{
			Operation: "20240501T025000Z-0badc0de", Action: "quarantine", Vhost: "/", Queue: "payments.dlq",
			Target: "queue payments.dlq.quarantine", Operator: "bob", Started: t0.Add(-10 * time.Minute),
			Selected: 4, FirstSeq: 7, LastSeq: 8, Counts: map[string]int{"confirmed": 2},
		},
	}
}

func newModel(r Reader) *Model {
	m := New(r, Options{Now: func() time.Time { return t0 }, Styles: styles.New(true)})
	m.SetSize(120, 40)
	return m
}

// settle runs the screen's commands and feeds their answers back.
func settle(t *testing.T, m *Model, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	var out []tea.Msg
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case common.ErrorMsg:
			out = append(out, msg)
		default:
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
	return out
}

func TestGoldenAuditScreen(t *testing.T) {
	tests := []struct {
		name string
		res  ops.Chain
	}{
		{name: "intact", res: ops.Chain{AuditResult: domain.AuditResult{OK: true, Records: 8, LastSeq: 8}, Operations: 2}},
		{name: "broken", res: ops.Chain{AuditResult: domain.AuditResult{Records: 5, LastSeq: 5, BrokenSeq: 6, Reason: "hash mismatch: the record was altered after it was written"}, Operations: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(&fakeReader{ops: sampleOps(), res: tt.res}, Options{Now: func() time.Time { return t0 }, Styles: styles.New(true)})
			tm := teatest.NewTestModel(t, program{s: m}, teatest.WithInitialTermSize(120, 40))
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
				return bytes.Contains(b, []byte("chain")) && bytes.Contains(b, []byte("INCOMPLETE"))
			}, teatest.WithDuration(5*time.Second))
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			teatest.RequireEqualOutput(t, []byte(tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()))
		})
	}
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

func TestOperationsAreShownNewestFirstWithOutcomes(t *testing.T) {
	m := newModel(&fakeReader{ops: sampleOps(), res: ops.Chain{AuditResult: domain.AuditResult{OK: true, Records: 8, LastSeq: 8}, Operations: 2}})
	settle(t, m, m.Init())
	v := m.View()
	first, second := strings.Index(v, "payments.dlq"), strings.Index(v, "orders.dlq")
	if first < 0 || second < 0 || first > second {
		t.Fatalf("newest operation is not first:\n%s", v)
	}
	for _, want := range []string{"chain verified: 8 records, 2 operations, last seq 8", "INCOMPLETE", "no final record"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if v := m.View(); !strings.Contains(v, "operation 20240501T020000Z-9f86d081 · vhost / · seq 1–6") || !strings.Contains(v, "finished 2024-05-01T02:10:00Z") {
		t.Errorf("detail does not follow the cursor:\n%s", v)
	}
}

func TestReadErrorsAreReported(t *testing.T) {
	m := newModel(&fakeReader{err: errors.New("permission denied")})
	out := settle(t, m, m.Init())
	if len(out) != 1 || !strings.Contains(out[0].(common.ErrorMsg).Err.Error(), "reading the audit log (file /var/lib/warren/audit.jsonl) failed: permission denied") {
		t.Fatalf("reported %v", out)
	}
	if !strings.Contains(m.View(), "could not read the log: permission denied") {
		t.Errorf("view:\n%s", m.View())
	}
}

func TestStaleLoadsAreDropped(t *testing.T) {
	r := &fakeReader{ops: sampleOps(), res: ops.Chain{AuditResult: domain.AuditResult{OK: true, Records: 8, LastSeq: 8}}}
	m := newModel(r)
	m.Init()
	old := m.load
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	m.Update(operationsMsg{load: old, ops: nil, err: errors.New("late")})
	m.Update(verifiedMsg{load: old, chain: ops.Chain{AuditResult: domain.AuditResult{BrokenSeq: 3}}})
	if m.opsErr != nil || m.verified {
		t.Fatalf("a superseded load changed the screen: err %v verified %v", m.opsErr, m.verified)
	}
	current := m.load
	m.Close()
	m.Update(operationsMsg{load: current, ops: sampleOps()})
	if len(m.ops) != 0 {
		t.Errorf("a closed screen took a late answer")
	}
}

// On a terminal narrower than the whole list, the queue, target and
// operator give up room first: every line fits, and the state that says
// an operation is INCOMPLETE stays on screen.
func TestTheListFitsANarrowTerminalAndKeepsTheState(t *testing.T) {
	// A wide terminal gives its room to the target and the queue: the
	// destinations of two operations on one DLQ must read apart.
	for _, tc := range []struct {
		width int
		want  []string
	}{
		{80, []string{"INCOMPLETE", "STATE", "done"}},
		{100, []string{"INCOMPLETE", "STATE"}},
		{160, []string{"INCOMPLETE", "queue payments.dlq.quarantine", "queue orders"}},
	} {
		m := newModel(detailReader())
		m.SetSize(tc.width, 40)
		settle(t, m, m.Init())
		v := m.View()
		for _, w := range tc.want {
			if !strings.Contains(v, w) {
				t.Fatalf("at %d columns %q is cut:\n%s", tc.width, w, v)
			}
		}
		for _, l := range strings.Split(v, "\n") {
			if w := ansi.StringWidth(l); w > tc.width {
				t.Fatalf("a line is %d columns wide at %d:\n%s", w, tc.width, l)
			}
		}
	}
}
