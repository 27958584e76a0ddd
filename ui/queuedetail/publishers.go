package queuedetail

import (
	"fmt"
	"strings"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/table"
)

// publishers lists the channels publishing to the exchanges that route to
// the queue, where the broker links them (rates_mode=detailed), and
// otherwise says it cannot.
func (m *Model) publishers(d *domain.QueueDetail) string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render(fmt.Sprintf("Publishers (%d)", len(d.Publishers))))
	if d.PublishersNote != "" {
		b.WriteString(" " + m.st.Muted.Render(sanitize.Text(d.PublishersNote)))
	}
	if len(d.Publishers) == 0 {
		if d.PublishersNote == "" {
			b.WriteString(" " + m.st.Muted.Render("no channel publishes to this queue's exchanges"))
		}
		return b.String()
	}
	t := m.staticTable([]table.Column{
		{Title: "EXCHANGE", Width: 16},
		{Title: "CONNECTION", Width: 16, Flex: true},
		{Title: "CHANNEL", Width: 16, Flex: true},
		{Title: "USER", Width: 10},
		{Title: "PUB/s", Width: 6, Align: table.Right},
	}, len(d.Publishers))
	b.WriteString("\n")
	b.WriteString(t.View(func(i int) table.Row {
		p := d.Publishers[i]
		ex := sanitize.Text(p.Exchange)
		if p.Exchange == "" {
			ex = "(default)"
		}
		return table.Row{Cells: []table.Cell{
			{Text: ex}, {Text: sanitize.Text(p.Connection)}, {Text: sanitize.Text(p.Channel)},
			{Text: sanitize.Text(p.User)}, {Text: format.RateOf(p.PublishRate)},
		}}
	}))
	return b.String()
}
