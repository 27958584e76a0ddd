package overview

import (
	"fmt"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/table"
)

// The cells of an overview row, each worded by text/format and toned for
// how much it asks for attention.

func oldestReason(q domain.Queue) string {
	if q.OldestUnknownReason != "" {
		return sanitize.Text(q.OldestUnknownReason)
	}
	if q.Messages == 0 {
		return "the queue is empty"
	}
	return "the broker did not report a head message timestamp"
}

func ageCell(r row) table.Cell {
	if !r.hasAge {
		return table.Cell{Text: format.Unknown, Tone: table.Muted}
	}
	return table.Cell{Text: format.Duration(r.age)}
}

// consumersCell is the CONS cell: the cheap list carries no consumer
// count, so a row without statistics does not know it.
func consumersCell(q domain.Queue) table.Cell {
	if !q.HasRates {
		return table.Cell{Text: format.Unknown, Tone: table.Muted}
	}
	return table.Cell{Text: fmt.Sprint(q.Consumers)}
}

func rateCell(q domain.Queue, v float64) table.Cell {
	if !q.HasRates {
		return table.Cell{Text: format.Unknown, Tone: table.Muted}
	}
	return table.Cell{Text: format.Rate(v)}
}

func dlqCell(r row) table.Cell {
	switch {
	case r.q.IsDLQ():
		return table.Cell{Text: "(dlq)", Tone: table.Muted}
	case r.q.Parking:
		return table.Cell{Text: "(parked)", Tone: table.Muted}
	case r.q.DLQ == nil && r.retry != "":
		return table.Cell{Text: "↻ " + r.retry, Tone: table.Muted}
	case r.q.DLQ == nil:
		return table.Cell{Text: format.Unknown, Tone: table.Muted}
	case r.dlqDepth > 0:
		return table.Cell{Text: format.Count(r.dlqDepth), Tone: table.Warn}
	}
	return table.Cell{Text: "0"}
}

// drainCell is the drain estimate of docs/ARCHITECTURE.md §4.1: backlog ÷
// (μ − λ) when the queue drains, else how it is failing to.
func drainCell(q domain.Queue) table.Cell {
	d := q.Drain()
	return table.Cell{Text: format.Drain(d), Tone: drainTone(d.Movement)}
}

// drainTone warns of a queue that fails to drain. A DLQ, a parking queue
// and a retry queue are meant to hold their messages, so they stay quiet.
func drainTone(m domain.Movement) table.Tone {
	switch m {
	case domain.Draining, domain.Steady:
		return table.Normal
	case domain.Growing, domain.NoConsumers, domain.Stalled:
		return table.Warn
	}
	return table.Muted
}

// delayedCell is the DELAYED cell: messages waiting out a quorum queue's
// delayed retry, counted in TOTAL but not in READY. Unknown where the
// broker does not report it (other queue types, rows without
// statistics).
func delayedCell(q domain.Queue) table.Cell {
	if q.Delayed == nil {
		return table.Cell{Text: format.Unknown, Tone: table.Muted}
	}
	return table.Cell{Text: format.Count(*q.Delayed)}
}
