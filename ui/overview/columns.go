package overview

import (
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/sparkline"
	"github.com/warrenops/warren/ui/components/table"
)

// col names one overview column. The table's columns and each row's
// cells are built from the same list, so they cannot disagree.
type col int

const (
	colVhost col = iota
	colName
	colType
	colReady
	colDelayed
	colUnack
	colTotal
	colOldest
	colCons
	colPub
	colAck
	colEffect
	colLast
	colDrain
	colDLQ
	colTrend
)

// trendWidth is the sparkline column's width.
const trendWidth = 8

// spec is what decides the columns: it changes with the rows shown.
type spec struct {
	// vhostWidth fits the longest vhost shown; 0 hides the column when
	// the overview shows one vhost.
	vhostWidth int
	effects    bool // some row shown has an inbox
	// delayed is set when some row shown reports how many messages wait
	// out a delayed retry (RabbitMQ 4.3 quorum queues read with
	// statistics), so an older broker's overview keeps its columns.
	delayed  bool
	dlqWidth int // wide enough for the retry targets shown
	// oldestWidth and lastWidth fit the longest ages shown, so an age is
	// never cut.
	oldestWidth, lastWidth int
}

// vhostMaxWidth bounds the VHOST column; longer names are cut with "…".
const vhostMaxWidth = 16

// Bounds of the DLQ column: a depth fits the narrowest, and a retry
// queue's "↻ work-queue" may widen it up to the widest.
const (
	dlqMinWidth = 6
	dlqMaxWidth = 16
)

// columnsFor fits 120 cells with a name column of 21; the name takes
// whatever a wider terminal gives, and a narrower one hides the least
// needed columns first (highest Drop), down to 80 cells. The effect
// rate outlives the queue's type: it says whether work gets done. The
// DELAYED column, when some row has the figure, takes the TREND
// column's place at 120 cells with every vhost shown; the selected
// row's note still draws its depth history.
func columnsFor(s spec) ([]col, []table.Column) {
	all := []struct {
		id  col
		c   table.Column
		use bool
	}{
		{colVhost, table.Column{Title: "VHOST", Width: s.vhostWidth, Drop: 5}, s.vhostWidth > 0},
		{colName, table.Column{Title: "NAME", Width: 16, Flex: true, Min: 10}, true},
		{colType, table.Column{Title: "TYPE", Width: 7, Drop: 4}, true},
		{colReady, table.Column{Title: "READY", Width: 6, Align: table.Right}, true},
		{colDelayed, table.Column{Title: "DELAYED", Width: 7, Align: table.Right, Drop: 2}, s.delayed},
		{colUnack, table.Column{Title: "UNACK", Width: 6, Align: table.Right, Drop: 2}, true},
		{colTotal, table.Column{Title: "TOTAL", Width: 6, Align: table.Right}, true},
		{colOldest, table.Column{Title: "OLDEST", Width: max(s.oldestWidth, len("OLDEST")), Align: table.Right}, true},
		{colCons, table.Column{Title: "CONS", Width: 4, Align: table.Right, Drop: 1}, true},
		{colPub, table.Column{Title: "PUB/s", Width: 6, Align: table.Right}, true},
		{colAck, table.Column{Title: "ACK/s", Width: 6, Align: table.Right}, true},
		{colEffect, table.Column{Title: "EFF/s", Width: 6, Align: table.Right, Drop: 3}, s.effects},
		{colLast, table.Column{Title: "LAST", Width: max(s.lastWidth, len("LAST")), Align: table.Right, Drop: 6}, s.effects},
		{colDrain, table.Column{Title: "DRAIN", Width: 15}, true},
		{colDLQ, table.Column{Title: "DLQ", Width: max(s.dlqWidth, dlqMinWidth), Align: table.Right, Min: dlqMinWidth}, true},
		{colTrend, table.Column{Title: "TREND", Width: trendWidth, Drop: 7}, true},
	}
	var ids []col
	var cols []table.Column
	for _, c := range all {
		if c.use {
			ids = append(ids, c.id)
			cols = append(cols, c.c)
		}
	}
	return ids, cols
}

// spec is the columns the rows now shown need.
func (m *Model) spec() spec {
	var s spec
	if m.vhost == "" {
		s.vhostWidth = len("VHOST")
	}
	var oldest, last time.Duration
	for _, i := range m.view {
		r := &m.rows[i]
		if r.hasAge {
			oldest = max(oldest, r.age)
		}
		if r.hasInbox {
			if e, ok := m.effects[r.q.Ref()]; ok && e.Err == nil {
				if age, ok := e.Effect.LastAge(); ok {
					last = max(last, age)
				}
			}
		}
		if m.vhost == "" {
			s.vhostWidth = max(s.vhostWidth, min(r.trend.vhostWidth, vhostMaxWidth))
		}
		s.effects = s.effects || r.hasInbox
		s.delayed = s.delayed || r.q.Delayed != nil
		if r.retry != "" && r.q.DLQ == nil {
			s.dlqWidth = max(s.dlqWidth, min(ansi.StringWidth(r.retry)+2, dlqMaxWidth))
		}
		if r.q.Parking {
			s.dlqWidth = max(s.dlqWidth, len("(parked)"))
		}
	}
	s.oldestWidth, s.lastWidth = format.DurationWidth(oldest), format.DurationWidth(last)
	return s
}

// fitColumns changes the table's columns when the rows shown need other
// ones.
func (m *Model) fitColumns() {
	s := m.spec()
	if s == m.colSpec && m.cols != nil {
		return
	}
	m.colSpec = s
	var cols []table.Column
	m.cols, cols = columnsFor(s)
	m.tbl.SetColumns(cols)
}

func (m *Model) renderRow(i int) table.Row {
	r := m.rows[m.view[i]]
	q := r.q
	cells := make([]table.Cell, len(m.cols))
	for j, c := range m.cols {
		switch c {
		case colVhost:
			cells[j] = table.Cell{Text: r.trend.vhost}
		case colName:
			cells[j] = table.Cell{Text: r.trend.name}
		case colType:
			cells[j] = table.Cell{Text: sanitize.Text(q.Type)}
		case colReady:
			cells[j] = table.Cell{Text: format.Count(q.Ready)}
		case colDelayed:
			cells[j] = delayedCell(q)
		case colUnack:
			cells[j] = table.Cell{Text: format.Count(q.Unacked)}
		case colTotal:
			cells[j] = table.Cell{Text: format.Count(q.Messages)}
		case colOldest:
			cells[j] = ageCell(r)
		case colCons:
			cells[j] = consumersCell(q)
		case colPub:
			cells[j] = rateCell(q, q.PublishRate)
		case colAck:
			cells[j] = rateCell(q, q.AckRate)
		case colEffect:
			cells[j], _ = m.effectCells(r)
		case colLast:
			_, cells[j] = m.effectCells(r)
		case colDrain:
			cells[j] = drainCell(q)
		case colDLQ:
			cells[j] = dlqCell(r)
		case colTrend:
			cells[j] = table.Cell{Text: sparkline.Render(r.trend.depth.Values(), trendWidth), Tone: table.Muted}
		}
	}
	return table.Row{Cells: cells, Tone: r.tone}
}
