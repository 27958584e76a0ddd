package deadletters

import (
	"bytes"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

// program runs one screen as the whole program, sized like a terminal.
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

func quorumLetters() []domain.DeadLetter {
	ls := sampleLetters()
	for i := range ls {
		ls[i].DeliveryCount = int64(i + 1)
		ls[i].Headroom = int64(4 - i)
	}
	return ls
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name    string
		depth   int
		letters []domain.DeadLetter
		notes   []string
		opts    Options
		confirm ops.Confirm
		keys    []tea.Msg
		until   string
		scan    *domain.Stats
	}{
		{
			name:    "dlq_screen",
			letters: sampleLetters(),
			keys:    []tea.Msg{press(" "), press("j"), press("j"), press(" "), press("j")},
			until:   "2 selected",
		},
		{
			name:    "quorum_dlq_with_headroom_and_notes",
			depth:   12,
			letters: quorumLetters(),
			notes: []string{
				"quorum queue without delivery limit: returned messages go to the back, order is not kept",
				"orders.dlq has 1 consumer: it cannot see the messages held here",
			},
		},
		{
			name:    "replay_prompt_in_prod",
			letters: sampleLetters(),
			confirm: ops.Confirm{Phrase: "orders.dlq 3", Why: "production context"},
			keys:    []tea.Msg{press("*"), press("r")},
			until:   "To confirm",
		},
		{
			name:    "whole_queue_statistics",
			letters: sampleLetters(),
			scan:    wholeStats(),
			keys:    []tea.Msg{press("S")},
			until:   "origins (whole queue)",
		},
		{
			name:    "failure_groups",
			letters: groupLetters(),
			keys:    []tea.Msg{press("g"), press("j")},
			until:   "Failure groups",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(ops.Page{Letters: tt.letters, Notes: tt.notes, Depth: tt.depth})
			scanner := newScanner(tt.scan, nil)
			close(scanner.release)
			opts := tt.opts
			opts.Now = func() time.Time { return t0 }
			opts.Styles = styles.New(true)
			m := New(ref, Deps{
				Browser:       &fakeBrowser{sessions: []*fakeSession{s}},
				Inbox:         fakeInbox{applied: map[string]time.Time{"ev-1": t0.Add(-time.Hour)}},
				Actions:       &fakeActions{skip: 1, confirm: tt.confirm},
				CompileFilter: compile,
				Scanner:       scanner,
			}, opts)
			t.Cleanup(func() { m.Close() })
			tm := teatest.NewTestModel(t, program{s: m}, teatest.WithInitialTermSize(120, 40))
			// The inbox answer comes last: once "pending" shows, the screen
			// is settled. WaitFor consumes what it reads, so the next wait
			// looks for what only the later frames can show.
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("pending")) },
				teatest.WithDuration(5*time.Second))
			if len(tt.keys) > 0 {
				for _, k := range tt.keys {
					tm.Send(k)
				}
				teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(tt.until)) },
					teatest.WithDuration(5*time.Second))
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
			teatest.RequireEqualOutput(t, []byte(final.View()))
		})
	}
}

func press(s string) tea.KeyMsg {
	if s == " " {
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}
