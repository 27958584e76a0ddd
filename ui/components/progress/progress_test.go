package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/ui/styles"
)

func TestView(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		counts Counts
		after  time.Duration
		want   []string
	}{
		{
			name:   "nothing done yet shows no rate",
			counts: Counts{Total: 40},
			want:   []string{"[" + strings.Repeat(".", 20) + "] 0/40    0%  —/s", "confirmed 0  returned 0  nacked 0  unknown 0"},
		},
		{
			name:   "half done fills half the bar and shows the rate",
			counts: Counts{Total: 40, Done: 20, Confirmed: 18, Returned: 1, Unknown: 1},
			after:  4 * time.Second,
			want:   []string{"[" + strings.Repeat("#", 10) + strings.Repeat(".", 10) + "] 20/40   50%  5.0/s", "confirmed 18  returned 1  nacked 0  unknown 1"},
		},
		{
			name:   "fast operations show whole messages per second",
			counts: Counts{Total: 1000, Done: 1000, Confirmed: 1000},
			after:  2 * time.Second,
			want:   []string{"] 1000/1000  100%  500/s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New("Replaying", tt.counts.Total, t0, styles.New(true))
			m.SetWidth(50)
			m.Set(tt.counts, t0.Add(tt.after))
			v := m.View()
			for _, w := range tt.want {
				if !strings.Contains(v, w) {
					t.Errorf("view lacks %q:\n%s", w, v)
				}
			}
		})
	}
}

func TestSetNeverMovesTimeBackwards(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	m := New("x", 10, t0, styles.New(true))
	m.Set(Counts{Total: 10, Done: 5}, t0.Add(5*time.Second))
	m.Set(Counts{Total: 10, Done: 6}, t0.Add(time.Second))
	if got := m.Rate(); got != 6.0/5 {
		t.Errorf("rate = %v, want %v", got, 6.0/5)
	}
}

func TestSetTitleRenamesTheOperation(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	m := New("Replay in progress", 10, time.Time{}, styles.New(true))
	m.SetTitle("Replay cancelling…")
	if v := m.View(); !strings.HasPrefix(v, "Replay cancelling…\n") {
		t.Fatalf("view = %q", v)
	}
}
