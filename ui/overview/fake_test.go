package overview

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

var taken = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)

// lister answers each Snapshot with the next scripted reply and records
// what it was asked.
type lister struct {
	replies []reply
	asked   []domain.SnapshotOptions
}

type reply struct {
	snap *domain.Snapshot
	err  error
}

func (l *lister) Snapshot(_ context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	l.asked = append(l.asked, o)
	r := l.replies[min(len(l.asked), len(l.replies))-1]
	return r.snap, r.err
}

func snapshot(qs ...domain.Queue) *domain.Snapshot {
	return &domain.Snapshot{TakenAt: taken, Queues: qs, Nodes: []domain.Node{{Name: "rabbit@a", Running: true}}}
}

func queue(vhost, name string, messages int64) domain.Queue {
	return domain.Queue{Vhost: vhost, Name: name, Type: "classic", Messages: messages, Ready: messages, Consumers: 1, HasRates: true, PublishRate: 1, AckRate: 1}
}

// newModel polls every nanosecond so that a scheduled tick, when a test
// runs it, returns at once instead of waiting.
func newModel(l *lister) *Model {
	m := New(Options{Lister: l, Styles: styles.New(true), Refresh: time.Nanosecond})
	m.SetSize(120, 30)
	return m
}

// update feeds msg to the model as the root would.
func update(t *testing.T, m *Model, msg tea.Msg) (*Model, tea.Cmd) {
	t.Helper()
	s, cmd := m.Update(msg)
	return s.(*Model), cmd
}

// run executes a command that must produce exactly one message.
func run(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	if cmd == nil {
		t.Fatal("expected a command, got none")
	}
	return cmd()
}

// load fetches and applies one snapshot.
func load(t *testing.T, m *Model, cmd tea.Cmd) (*Model, tea.Cmd) {
	t.Helper()
	msg, ok := run(t, cmd).(snapshotMsg)
	if !ok {
		t.Fatalf("command did not fetch a snapshot")
	}
	return update(t, m, msg)
}

func press(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func shown(m *Model) []string {
	var names []string
	for _, i := range m.view {
		names = append(names, m.rows[i].q.Name)
	}
	return names
}

func openedQueue(t *testing.T, cmd tea.Cmd) any {
	t.Helper()
	switch msg := run(t, cmd).(type) {
	case common.OpenQueueMsg:
		return msg.Queue
	case common.OpenDLQMsg:
		return msg
	case common.ErrorMsg:
		return msg
	default:
		t.Fatalf("unexpected message %T", msg)
	}
	return nil
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
