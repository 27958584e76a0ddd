package cli

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// With several contexts, the findings' contexts are a column, so the
// places line up whatever the contexts' names; one context is not named.
func TestCheckLinesKeepTheirContextsInAColumn(t *testing.T) {
	found := []finding{
		{level: format.ActNow, context: "prod-eu", where: "/orders", reasons: []string{"not draining"}},
		{level: format.WorthALook, context: "qa", where: "/orders.dlq", reasons: []string{"holds 1 dead letter"}},
		{level: format.ActNow, context: "évora\x1b[2J", reasons: []string{"cannot be judged"}},
	}
	at := -1
	for _, f := range found {
		line := f.line(ansi.StringWidth(sanitize.Text(found[2].context)))
		if strings.Contains(line, "\x1b") {
			t.Fatalf("%q: a context's name reaches the terminal unsanitised", line)
		}
		place := f.where
		if place == "" {
			place = f.reasons[0]
		}
		col := ansi.StringWidth(line[:strings.Index(line, place)])
		if at >= 0 && col != at {
			t.Errorf("%q: its place starts at column %d, the line before's at %d", line, col, at)
		}
		at = col
	}
	if got := found[0].line(0); got != "act now      /orders: not draining" {
		t.Errorf("one context: %q, want no context named", got)
	}
}
