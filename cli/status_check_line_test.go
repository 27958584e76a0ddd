package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
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

// A queue whose name holds an escape is escaped once on the line, as
// the reason Assess made says it: a backslash is not doubled.
func TestACheckLineEscapesAQueueNameOnce(t *testing.T) {
	dlq := domain.QueueRef{Vhost: "/", Name: "evil\x1b[2J.dlq"}
	q := domain.Queue{Vhost: "/", Name: "evil\x1b[2J", DLQ: &dlq, DLQMessages: 1}
	level, reasons := format.Assess(q, nil, time.Minute, "")
	line := finding{level: level, where: "/" + q.Name, reasons: reasons}.line(0)
	if strings.Contains(line, "\x1b") || !strings.Contains(line, `1 dead letter in evil\x1b[2J.dlq`) || strings.Contains(line, `\\x1b`) {
		t.Errorf("the line: %q", line)
	}
}
