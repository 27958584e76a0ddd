package styles

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
)

func TestDefaultHonoursNoColor(t *testing.T) {
	tests := []struct {
		name      string
		noColor   string
		wantColor bool
	}{
		{name: "unset gives colors", noColor: "", wantColor: true},
		{name: "set gives no colors", noColor: "1", wantColor: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tt.noColor)
			s := Default()
			_, none := s.Palette.Red.(lipgloss.NoColor)
			if none == tt.wantColor {
				t.Fatalf("red is %#v, want colors=%v", s.Palette.Red, tt.wantColor)
			}
			_, none = s.Trouble.GetForeground().(lipgloss.NoColor)
			if none == tt.wantColor {
				t.Fatalf("trouble foreground is %#v, want colors=%v", s.Trouble.GetForeground(), tt.wantColor)
			}
		})
	}
}

func TestSelectedRowVisibleWithoutColor(t *testing.T) {
	if !New(true).TableSelected.GetReverse() {
		t.Fatal("without colors the selected row must be drawn in reverse video")
	}
	if New(false).TableSelected.GetReverse() {
		t.Fatal("with colors the selected row uses a background, not reverse video")
	}
}
