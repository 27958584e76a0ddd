package message

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A header value of 120 000 characters would wrap into some 1 500 lines
// and bury the body: the inspector shows what fits on a few lines of the
// screen and says how long the value is and where to read it whole.
func TestInspectorCutsALongHeaderValueToTheScreen(t *testing.T) {
	msg := sample()
	msg.Letter.Headers["stack"] = strings.Repeat("x", 120_000)
	for _, width := range []int{80, 200} {
		m := newModel(msg)
		m.SetSize(width, 40)
		content := strings.Join(m.lines, "\n")
		note := "… (120000 characters, warren dlq show --json gives it whole)"
		if !strings.Contains(strings.ReplaceAll(content, "\n", ""), note) {
			t.Fatalf("width %d: no note of the value's length:\n%s", width, content)
		}
		xs := 0
		for _, l := range m.lines {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("width %d: a line of %d cells: %q", width, w, l)
			}
			if strings.Contains(l, "xxxxxxxxxx") {
				xs++
			}
		}
		if xs == 0 || xs > headerValueLines {
			t.Errorf("width %d: the value takes %d lines, want 1 to %d", width, xs, headerValueLines)
		}
		if !strings.Contains(content, `"order": 42`) {
			t.Errorf("width %d: the body is not shown", width)
		}
	}
}

func TestInspectorShowsAShortHeaderValueWhole(t *testing.T) {
	m := newModel(sample())
	m.SetSize(80, 40)
	content := strings.Join(m.lines, "\n")
	if strings.Contains(content, "characters, warren dlq show --json") {
		t.Errorf("a short header was cut:\n%s", content)
	}
}
