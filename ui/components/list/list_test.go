package list

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/ui/keys"
)

func key(k string) tea.KeyMsg {
	switch k {
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// named is a list of n rows keyed "r<i>", height rows high.
func named(n, height int) Model[string] {
	m := New(keys.DefaultNav(), func(i int) string { return fmt.Sprintf("r%d", i) })
	m.SetHeight(height)
	m.SetLen(n)
	return m
}

func TestKeysMoveTheCursorAndKeepItInView(t *testing.T) {
	tests := []struct {
		name      string
		overlap   int
		keys      []string
		wantCur   int
		wantStart int
	}{
		{name: "down moves one", keys: []string{"j"}, wantCur: 1},
		{name: "up at the top stays", keys: []string{"k"}, wantCur: 0},
		{name: "page down moves a page", keys: []string{"pgdown"}, wantCur: 5, wantStart: 1},
		{name: "page down with an overlap keeps a row of context", overlap: 1, keys: []string{"pgdown"}, wantCur: 4},
		{name: "page up comes back", keys: []string{"pgdown", "pgdown", "pgup"}, wantCur: 5, wantStart: 5},
		{name: "bottom goes to the last row and shows a full page", keys: []string{"G"}, wantCur: 99, wantStart: 95},
		{name: "past the end stays on the last row", keys: []string{"G", "j"}, wantCur: 99, wantStart: 95},
		{name: "top returns", keys: []string{"G", "g"}, wantCur: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := named(100, 5)
			m.SetOverlap(tt.overlap)
			for _, k := range tt.keys {
				var ok bool
				if m, ok = m.Update(key(k)); !ok {
					t.Fatalf("key %q not handled", k)
				}
			}
			start, end := m.Window()
			if m.Cursor() != tt.wantCur || start != tt.wantStart || end != start+5 {
				t.Fatalf("cursor %d window [%d,%d), want cursor %d window from %d", m.Cursor(), start, end, tt.wantCur, tt.wantStart)
			}
		})
	}
}

func TestOtherMessagesAreNotHandled(t *testing.T) {
	m := named(10, 5)
	for _, msg := range []tea.Msg{key("x"), tea.WindowSizeMsg{}} {
		if _, ok := m.Update(msg); ok {
			t.Errorf("%v was handled", msg)
		}
	}
}

func TestViewBuildsOnlyTheRowsOnScreen(t *testing.T) {
	m := named(10000, 3)
	m.SetCursor(5000)
	m.Reveal()
	var built []int
	out := m.View(func(i int) string {
		built = append(built, i)
		return fmt.Sprint(i)
	})
	if !slices.Equal(built, []int{4998, 4999, 5000}) || out != "4998\n4999\n5000" {
		t.Fatalf("built %v, drew %q; want the three rows ending at the cursor", built, out)
	}
}

func TestAnEmptyListHasNoCursorAndDrawsNothing(t *testing.T) {
	m := named(0, 5)
	if m.Cursor() != -1 || m.View(func(int) string { return "x" }) != "" {
		t.Fatalf("cursor %d on an empty list", m.Cursor())
	}
}

func TestShrinkingKeepsTheCursorOnARow(t *testing.T) {
	m := named(100, 5)
	m.SetCursor(90)
	m.Reveal()
	m.SetLen(3)
	m.Reveal()
	if start, end := m.Window(); m.Cursor() != 2 || start != 0 || end != 3 {
		t.Fatalf("cursor %d window [%d,%d), want 2 in [0,3)", m.Cursor(), start, end)
	}
}

func TestAShorterScreenDoesNotScrollUntilTheCursorMoves(t *testing.T) {
	m := named(100, 5)
	m, _ = m.Update(key("G"))
	m, _ = m.Update(key("g"))
	for range 4 {
		m, _ = m.Update(key("j"))
	}
	m.SetHeight(3) // a prompt took two lines
	if start, end := m.Window(); start != 0 || end != 3 {
		t.Fatalf("window [%d,%d) moved while drawing", start, end)
	}
	m, _ = m.Update(key("j"))
	if start, end := m.Window(); start != 3 || end != 6 || m.Cursor() != 5 {
		t.Fatalf("window [%d,%d) cursor %d after a move, want [3,6) and 5", start, end, m.Cursor())
	}
}

func TestMoveLeavesTheScrollToReveal(t *testing.T) {
	m := named(100, 5)
	m.Move(key("G"))
	if start, _ := m.Window(); start != 0 || m.Cursor() != 99 {
		t.Fatalf("Move scrolled to %d (cursor %d)", start, m.Cursor())
	}
	m.Reveal()
	if start, _ := m.Window(); start != 95 {
		t.Fatalf("Reveal scrolled to %d, want 95", start)
	}
}

func selected(m Model[string], n int) string {
	var out []string
	for i := range n {
		if k := fmt.Sprintf("r%d", i); m.IsSelected(k) {
			out = append(out, k)
		}
	}
	return strings.Join(out, ",")
}

func TestSelection(t *testing.T) {
	tests := []struct {
		name string
		do   func(m *Model[string])
		want string
	}{
		{name: "toggling selects the row under the cursor", do: func(m *Model[string]) { m.ToggleSelection() }, want: "r0"},
		{name: "toggling twice lets it go", do: func(m *Model[string]) { m.ToggleSelection(); m.ToggleSelection() }},
		{name: "select all takes every row", do: func(m *Model[string]) { m.ToggleSelectAll() }, want: "r0,r1,r2,r3"},
		{name: "select all with some selected takes the rest", do: func(m *Model[string]) { m.SetCursor(2); m.ToggleSelection(); m.ToggleSelectAll() }, want: "r0,r1,r2,r3"},
		{name: "select all when all are selected lets them go", do: func(m *Model[string]) { m.ToggleSelectAll(); m.ToggleSelectAll() }},
		{
			name: "select all leaves rows a filter hides as they were",
			do: func(m *Model[string]) {
				m.SetCursor(3)
				m.ToggleSelection()
				m.SetLen(2) // a filter shows r0 and r1 only
				m.ToggleSelectAll()
				m.ToggleSelectAll()
			},
			want: "r3",
		},
		{name: "clearing lets every row go", do: func(m *Model[string]) { m.ToggleSelectAll(); m.ClearSelection() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := named(4, 5)
			tt.do(&m)
			if got := selected(m, 4); got != tt.want {
				t.Fatalf("selected %q, want %q", got, tt.want)
			}
			if n := m.SelectedLen(); n != len(strings.FieldsFunc(tt.want, func(r rune) bool { return r == ',' })) {
				t.Fatalf("SelectedLen = %d for %q", n, tt.want)
			}
		})
	}
}

func TestSelectAllSaysWhetherItSelected(t *testing.T) {
	m := named(3, 5)
	if !m.ToggleSelectAll() || m.ToggleSelectAll() {
		t.Fatal("select all then again should report selected, then cleared")
	}
	empty := named(0, 5)
	if empty.ToggleSelectAll(); empty.SelectedLen() != 0 {
		t.Fatal("select all on an empty list selected something")
	}
}

func TestAListWithoutKeysHasNoSelection(t *testing.T) {
	m := New[int](keys.DefaultNav(), nil)
	m.SetLen(3)
	m.ToggleSelection()
	m.ToggleSelectAll()
	if m.SelectedLen() != 0 {
		t.Fatalf("selected %d rows without keys", m.SelectedLen())
	}
}
