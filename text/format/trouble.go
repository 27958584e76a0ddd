package format

import (
	"fmt"
	"time"

	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/text/sanitize"
)

// Mark says why a queue is marked in trouble, as the overview's note
// says it: "DLQ orders.dlq growing (+12 in the last 1m)", "not draining:
// no consumers". dlq names the work queue's paired DLQ; window is how far
// the judgement looks (docs/ARCHITECTURE.md §4.10). A movement mark held
// while the latest samples no longer show it says how much of the window
// did, so the note never contradicts the DRAIN column without a reason.
func Mark(m trouble.Mark, dlq string, window time.Duration) string {
	over := "in the last " + Duration(window)
	switch m.Kind {
	case trouble.DLQGrowing:
		return fmt.Sprintf("DLQ %s growing (+%d %s)", sanitize.Text(dlq), m.Added, over)
	case trouble.Arriving:
		return fmt.Sprintf("dead letters arriving (+%d %s)", m.Added, over)
	case trouble.DLXGrowing:
		return fmt.Sprintf("DLX backlog growing (+%d %s)", m.Added, over)
	}
	text := DrainNote(m.Drain)
	if m.Shown < m.Judged {
		text += fmt.Sprintf(" (%d of %d samples %s)", m.Shown, m.Judged, over)
	}
	return text
}
