package keys

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func TestNavMoveStepsPagesAndEnds(t *testing.T) {
	n := DefaultNav()
	cases := []struct {
		key  tea.KeyMsg
		want int
		ok   bool
	}{
		{tea.KeyMsg{Type: tea.KeyUp}, 9, true},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")}, 11, true},
		{tea.KeyMsg{Type: tea.KeyPgUp}, 5, true},
		{tea.KeyMsg{Type: tea.KeyPgDown}, 15, true},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("g")}, 0, true},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("G")}, 99, true},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")}, 10, false},
	}
	for _, c := range cases {
		got, ok := n.Move(c.key, 10, 5, 99)
		if got != c.want || ok != c.ok {
			t.Errorf("Move(%q) = %d, %v; want %d, %v", c.key.String(), got, ok, c.want, c.ok)
		}
	}
}
