package histogram

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/ui/styles"
)

func TestRender(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	st := styles.New(true)
	tests := []struct {
		name    string
		bars    []Bar
		width   int
		maxRows int
		want    string
	}{
		{
			name:  "largest bar fills the room and counts align",
			bars:  []Bar{{"rejected", 10}, {"expired", 5}},
			width: 30, maxRows: 5,
			want: "reasons\nrejected 10 ██████████████████\nexpired   5 █████████",
		},
		{
			name:  "a tiny count still gets one block",
			bars:  []Bar{{"a", 1000}, {"b", 1}},
			width: 14, maxRows: 5,
			want: "reasons\na 1000 ███████\nb    1 █",
		},
		{
			name:  "buckets beyond the row limit fold into other",
			bars:  []Bar{{"a", 4}, {"b", 3}, {"c", 2}, {"d", 1}},
			width: 20, maxRows: 3,
			want: "reasons\na         4 ████████\nb         3 ██████\nother (2) 3 ██████",
		},
		{
			name:  "no buckets says none",
			width: 20, maxRows: 3,
			want: "reasons\n  (none)",
		},
		{
			name:  "hostile labels are escaped and long ones truncated",
			bars:  []Bar{{"\x1b[2Jevil-queue-with-a-long-name", 2}},
			width: 30, maxRows: 3,
			want: "reasons\n\\x1b[2Jevil-q… 2 █████████████",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Render(st, "reasons", tt.bars, tt.width, tt.maxRows)
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if strings.ContainsRune(got, '\x1b') {
				t.Error("raw ESC in output")
			}
		})
	}
}

func TestByCountOrdersLargestFirstThenByLabel(t *testing.T) {
	got := ByCount(map[string]int{"b": 2, "a": 2, "c": 5})
	want := []Bar{{"c", 5}, {"a", 2}, {"b", 2}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestByKeyOrdersByAttempts(t *testing.T) {
	got := ByKey(map[int]int{10: 1, 2: 7, 1: 3})
	want := []Bar{{"1", 3}, {"2", 7}, {"10", 1}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
