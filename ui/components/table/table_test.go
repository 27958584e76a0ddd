package table

import (
	"github.com/charmbracelet/x/ansi"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/ui/styles"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func cols() []Column {
	return []Column{
		{Title: "NAME", Width: 4, Flex: true},
		{Title: "N", Width: 5, Align: Right},
	}
}

func TestLayoutGivesFlexColumnTheRest(t *testing.T) {
	m := New(cols(), styles.New(true))
	m.SetSize(30, 5)
	// 30 - gutter 2 - one separator - 5 fixed = 22.
	if got := m.Widths(); got[0] != 22 || got[1] != 5 {
		t.Fatalf("widths = %v, want [22 5]", got)
	}
}

func TestViewRendersOnlyVisibleRows(t *testing.T) {
	m := New(cols(), styles.New(true))
	m.SetSize(30, 4)
	m.SetLen(10000)
	m.SetCursor(5000)
	var calls []int
	out := m.View(func(i int) Row {
		calls = append(calls, i)
		return Row{Cells: []Cell{{Text: "q"}, {Text: "1"}}}
	})
	if len(calls) != 3 || calls[2] != 5000 {
		t.Fatalf("rendered rows %v, want the 3 ending at the cursor 5000", calls)
	}
	if lines := strings.Split(out, "\n"); len(lines) != 4 {
		t.Fatalf("got %d lines, want header + 3:\n%s", len(lines), out)
	}
}

func TestRowsTruncateWithEllipsisAndShowMarks(t *testing.T) {
	m := New(cols(), styles.New(true))
	m.SetSize(20, 4)
	m.SetLen(2)
	out := m.View(func(i int) Row {
		r := Row{Cells: []Cell{{Text: "a-very-long-queue-name"}, {Text: "42"}}}
		if i == 1 {
			r.Tone = Trouble
		}
		return r
	})
	want := "  NAME             N\n" +
		"> a-very-long…    42\n" +
		" !a-very-long…    42"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
}

func TestCursorMovesAndStaysInRange(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want int
	}{
		{name: "down moves one", keys: []string{"j"}, want: 1},
		{name: "up at top stays", keys: []string{"k"}, want: 0},
		{name: "bottom goes to last", keys: []string{"G"}, want: 99},
		{name: "page down moves a page", keys: []string{"pgdown"}, want: 4},
		{name: "past the end clamps", keys: []string{"G", "j", "j"}, want: 99},
		{name: "top returns", keys: []string{"G", "g"}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(cols(), styles.New(true))
			m.SetSize(30, 5)
			m.SetLen(100)
			for _, k := range tt.keys {
				m, _ = m.Update(keyMsg(k))
			}
			if m.Cursor() != tt.want {
				t.Fatalf("cursor = %d, want %d", m.Cursor(), tt.want)
			}
			start, end := m.Window()
			if m.Cursor() < start || m.Cursor() >= end {
				t.Fatalf("cursor %d outside window [%d,%d)", m.Cursor(), start, end)
			}
		})
	}
}

func TestShrinkingKeepsCursorInRange(t *testing.T) {
	m := New(cols(), styles.New(true))
	m.SetSize(30, 5)
	m.SetLen(100)
	m.SetCursor(90)
	m.SetLen(3)
	if m.Cursor() != 2 {
		t.Fatalf("cursor = %d, want 2", m.Cursor())
	}
	if start, _ := m.Window(); start != 0 {
		t.Fatalf("window starts at %d, want 0", start)
	}
	m.SetLen(0)
	if m.Cursor() != -1 {
		t.Fatalf("empty table cursor = %d, want -1", m.Cursor())
	}
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func TestNarrowTableHidesDroppableColumnsFirst(t *testing.T) {
	c := []Column{
		{Title: "NAME", Width: 6, Flex: true},
		{Title: "A", Width: 5, Drop: 1},
		{Title: "B", Width: 5, Drop: 2},
		{Title: "C", Width: 5},
	}
	tests := []struct {
		name  string
		width int
		want  []int
	}{
		{name: "wide shows all", width: 40, want: []int{20, 5, 5, 5}},
		{name: "narrow drops the highest Drop", width: 22, want: []int{8, 5, -1, 5}},
		{name: "narrower drops the next", width: 16, want: []int{8, -1, -1, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(c, styles.New(true))
			m.SetSize(tt.width, 3)
			if got := m.Widths(); !slices.Equal(got, tt.want) {
				t.Fatalf("widths = %v, want %v", got, tt.want)
			}
			m.SetLen(1)
			for _, line := range strings.Split(m.View(func(int) Row { return Row{} }), "\n") {
				if w := len([]rune(line)); w > tt.width {
					t.Fatalf("line %q is %d wide, table is %d", line, w, tt.width)
				}
			}
		})
	}
}

func TestSetColumnsLaysOutAgainAndKeepsTheCursor(t *testing.T) {
	m := New(cols(), styles.New(true))
	m.SetSize(30, 5)
	m.SetLen(10)
	m.SetCursor(7)
	m.SetColumns([]Column{{Title: "V", Width: 3}, {Title: "NAME", Width: 4, Flex: true}, {Title: "N", Width: 5, Align: Right}})
	if got := m.Widths(); !slices.Equal(got, []int{3, 18, 5}) {
		t.Fatalf("widths = %v, want [3 18 5]", got)
	}
	if m.Cursor() != 7 {
		t.Fatalf("cursor = %d, want 7", m.Cursor())
	}
	if head := strings.Split(m.View(func(int) Row { return Row{} }), "\n")[0]; !strings.HasPrefix(head, "  V   NAME") {
		t.Fatalf("header %q does not show the new columns", head)
	}
}

// With nothing left to drop, columns with a Min give up their room down
// to it, so a row still fits the table.
func TestColumnsShrinkToTheirMinOnceNothingIsLeftToDrop(t *testing.T) {
	c := []Column{
		{Title: "NAME", Width: 6, Flex: true, Min: 3},
		{Title: "A", Width: 5, Drop: 1},
		{Title: "DLQ", Width: 8, Min: 4},
	}
	for _, tt := range []struct {
		width int
		want  []int
	}{
		{width: 17, want: []int{6, -1, 8}},
		{width: 15, want: []int{4, -1, 8}},
		{width: 12, want: []int{3, -1, 6}},
	} {
		m := New(c, styles.New(true))
		m.SetSize(tt.width, 3)
		if got := m.Widths(); !slices.Equal(got, tt.want) {
			t.Fatalf("at %d: widths = %v, want %v", tt.width, got, tt.want)
		}
		m.SetLen(1)
		for _, line := range strings.Split(m.View(func(int) Row {
			return Row{Cells: []Cell{{Text: "orders.events"}, {Text: "1"}, {Text: "↻ orders.events"}}}
		}), "\n") {
			if w := ansi.StringWidth(line); w > tt.width {
				t.Fatalf("at %d: line %q is %d wide", tt.width, line, w)
			}
		}
	}
}
