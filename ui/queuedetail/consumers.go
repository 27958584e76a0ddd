package queuedetail

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/components/table"
)

// consumers lists who consumes the queue and how much they may hold
// unacknowledged (docs/ARCHITECTURE.md §4.1: 3 consumers × prefetch 20 = 60).
func (m *Model) consumers(d *domain.QueueDetail) string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render(fmt.Sprintf("Consumers (%d)", len(d.Consumers))))
	b.WriteString(" " + m.unacked(d))
	if len(d.Consumers) == 0 {
		b.WriteString("\n  " + m.st.Muted.Render("nobody consumes this queue"))
		return b.String()
	}
	unacked := map[string]int64{}
	for _, ch := range d.Channels {
		unacked[ch.Name] = ch.Unacked
	}
	// The tag column is as wide as the longest tag (up to 40); the channel
	// takes the rest, so its number at the end of the name stays in view.
	tagWidth := len("TAG")
	for _, c := range d.Consumers {
		tagWidth = max(tagWidth, ansi.StringWidth(sanitize.Text(c.Tag)))
	}
	t := m.staticTable([]table.Column{
		{Title: "TAG", Width: min(tagWidth, maxTagWidth)},
		{Title: "CHANNEL", Width: 16, Flex: true},
		{Title: "ACK", Width: 6},
		{Title: "PREFETCH", Width: 8, Align: table.Right},
		{Title: "CH UNACK", Width: 8, Align: table.Right},
		{Title: "ACTIVITY", Width: 12},
	}, len(d.Consumers))
	b.WriteString("\n")
	b.WriteString(t.View(func(i int) table.Row {
		c := d.Consumers[i]
		ack := table.Cell{Text: "manual"}
		if !c.AckRequired {
			ack = table.Cell{Text: "auto", Tone: table.Warn}
		}
		prefetch := table.Cell{Text: fmt.Sprint(c.PrefetchCount)}
		if c.PrefetchCount == 0 {
			prefetch = table.Cell{Text: "none", Tone: table.Warn}
		}
		chUnacked := table.Cell{Text: format.Unknown, Tone: table.Muted}
		if n, ok := unacked[c.Channel]; ok {
			chUnacked = table.Cell{Text: format.Count(n)}
		}
		activity := table.Cell{Text: sanitize.Text(orDefault(c.ActivityStatus, "up"))}
		if !c.Active {
			activity.Tone = table.Muted
		}
		return table.Row{Cells: []table.Cell{
			{Text: sanitize.Text(c.Tag)}, {Text: sanitize.Text(c.Channel)}, ack, prefetch, chUnacked, activity,
		}}
	}))
	return b.String()
}

// maxTagWidth bounds the consumer tag column; longer tags are cut.
const maxTagWidth = 40

// unacked is the used/allowed figure against the consumers' prefetch.
func (m *Model) unacked(d *domain.QueueDetail) string {
	used := format.Count(d.UnackedUsed)
	switch {
	case d.UnackedUnlimited:
		return m.st.Warn.Render("· unacked " + used + ", no limit: a consumer has no prefetch and may take everything")
	case d.UnackedAllowed == 0:
		return m.st.Muted.Render("· unacked " + used)
	case d.UnackedUsed >= d.UnackedAllowed:
		return m.st.Warn.Render(fmt.Sprintf("· unacked %s / %s allowed: consumers are at their prefetch limit", used, format.Count(d.UnackedAllowed)))
	}
	return fmt.Sprintf("· unacked %s / %s allowed", used, format.Count(d.UnackedAllowed))
}

// channels shows the consumers' channels, with the confirm-mode ones'
// unconfirmed publishes.
func (m *Model) channels(d *domain.QueueDetail) string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render(fmt.Sprintf("Channels (%d)", len(d.Channels))))
	if d.ChannelsNote != "" {
		b.WriteString(" " + m.st.Muted.Render(sanitize.Text(d.ChannelsNote)))
	}
	var unconfirmed int64
	confirming := 0
	for _, ch := range d.Channels {
		if ch.ConfirmMode {
			confirming++
			unconfirmed += ch.Unconfirmed
		}
	}
	switch {
	case confirming > 0:
		b.WriteString(fmt.Sprintf(" · %d in confirm mode, %s unconfirmed", confirming, format.Count(unconfirmed)))
	case len(d.Channels) > 0:
		b.WriteString(m.st.Muted.Render(" · none in confirm mode"))
	}
	if len(d.Channels) == 0 {
		return b.String()
	}
	// The STATE column fits every idle time shown, never cut.
	stateWidth := 10
	for _, ch := range d.Channels {
		if ch.IdleSince != nil {
			stateWidth = max(stateWidth, len(idleText(d.TakenAt.Sub(*ch.IdleSince))))
		}
	}
	t := m.staticTable([]table.Column{
		{Title: "CHANNEL", Width: 16, Flex: true},
		{Title: "USER", Width: 10},
		{Title: "PREFETCH", Width: 8, Align: table.Right},
		{Title: "UNACKED", Width: 7, Align: table.Right},
		{Title: "CONFIRM", Width: 7},
		{Title: "UNCONF", Width: 6, Align: table.Right},
		{Title: "ACK/s", Width: 6, Align: table.Right},
		{Title: "STATE", Width: stateWidth},
	}, len(d.Channels))
	b.WriteString("\n")
	b.WriteString(t.View(func(i int) table.Row {
		ch := d.Channels[i]
		confirm, unconf := table.Cell{Text: "no", Tone: table.Muted}, table.Cell{Text: format.Unknown, Tone: table.Muted}
		if ch.ConfirmMode {
			confirm, unconf = table.Cell{Text: "yes"}, table.Cell{Text: format.Count(ch.Unconfirmed)}
			if ch.Unconfirmed > 0 {
				unconf.Tone = table.Warn
			}
		}
		prefetch := fmt.Sprint(ch.PrefetchCount)
		if ch.GlobalPrefetch > 0 {
			prefetch += fmt.Sprintf("/%dg", ch.GlobalPrefetch)
		}
		state := table.Cell{Text: "busy"}
		if ch.IdleSince != nil {
			state = table.Cell{Text: idleText(d.TakenAt.Sub(*ch.IdleSince)), Tone: table.Muted}
		}
		return table.Row{Cells: []table.Cell{
			{Text: sanitize.Text(ch.Name)}, {Text: sanitize.Text(ch.User)}, {Text: prefetch},
			{Text: format.Count(ch.Unacked)}, confirm, unconf, {Text: format.Rate(ch.AckRate)}, state,
		}}
	}))
	return b.String()
}

// staticTable is a table showing all n rows, without a cursor.
func (m *Model) staticTable(cols []table.Column, n int) table.Model {
	t := table.New(cols, m.st)
	t.SetFocused(false)
	t.SetSize(m.Width, n+1)
	t.SetLen(n)
	return t
}

func idleText(d time.Duration) string { return "idle " + format.Duration(d) }
