package queuedetail

import (
	"fmt"
	"strings"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/sparkline"
)

// content is the whole screen before scrolling.
func (m *Model) content() string {
	var b strings.Builder
	switch {
	case m.gone:
		b.WriteString(m.st.Trouble.Render("queue " + format.QueueName(m.ref.Vhost, m.ref.Name) + " no longer exists; press r to look again or esc to go back"))
		return b.String()
	case m.detail == nil && m.err != nil:
		return m.st.Trouble.Render("could not read queue " + sanitize.Text(m.ref.Name) + ": " + sanitize.Text(m.err.Error()) + "; retrying")
	case m.detail == nil:
		return m.st.Muted.Render("reading queue " + sanitize.Text(m.ref.Name) + "…")
	}
	d := m.detail
	if m.err != nil {
		b.WriteString(m.st.Trouble.Render("refresh failed, retrying (last error: " + sanitize.Text(m.err.Error()) + ")"))
		b.WriteString("\n")
	}
	sections := []string{
		m.summary(d),
		m.settings(d),
		m.findings(d),
		m.consumers(d),
		m.channels(d),
		m.history(d),
		m.publishers(d),
	}
	b.WriteString(strings.Join(sections, "\n\n"))
	return b.String()
}

// summary is the queue's identity and figures.
func (m *Model) summary(d *domain.QueueDetail) string {
	q := d.Queue
	ident := []string{m.st.Title.Render(sanitize.Text(q.Name)), "in vhost " + sanitize.Text(q.Vhost), sanitize.Text(q.Type)}
	if q.Durable {
		ident = append(ident, "durable")
	}
	if q.State != "" && q.State != "running" {
		ident = append(ident, m.st.Trouble.Render("state "+sanitize.Text(q.State)))
	}
	if q.Node != "" {
		// A replicated queue (quorum, stream) has a leader among its
		// members; a classic queue lives on one node.
		where := "on node "
		if len(q.Members) > 0 || q.Type == "quorum" || q.Type == "stream" {
			where = "leader "
		}
		ident = append(ident, where+sanitize.Text(q.Node))
	}
	if len(q.Members) > 0 {
		members := make([]string, len(q.Members))
		for i, n := range q.Members {
			members[i] = sanitize.Text(n)
		}
		ident = append(ident, "members "+strings.Join(members, ", "))
	}
	if q.IsDLQ() {
		var of []string
		for _, r := range q.DLQOf {
			of = append(of, sanitize.Text(r.Name))
		}
		switch {
		case len(of) == 0:
			ident = append(ident, "an error queue by its name; its messages say which queues it serves")
		case q.PairedBy != "" && q.PairedBy != domain.PairedByDLX:
			ident = append(ident, "DLQ of "+strings.Join(of, ", ")+" (paired by "+q.PairedBy+")")
		default:
			ident = append(ident, "DLQ of "+strings.Join(of, ", "))
		}
	}
	if q.Parking {
		ident = append(ident, "parking queue: quarantined messages, out of replays until released (d, then r)")
	}
	oldest := format.Unknown + " (" + sanitize.Text(orDefault(q.OldestUnknownReason, "not reported")) + ")"
	if age, ok := q.OldestAge(d.TakenAt); ok {
		oldest = format.Duration(age) + " (published)"
	}
	consumers := format.Plural(q.Consumers, "consumer")
	if !q.HasRates {
		consumers = "consumers " + format.Unknown
	}
	figures := fmt.Sprintf("depth %s (%s) · %s · oldest %s", format.Count(q.Messages), depthParts(q), consumers, oldest)
	rates := []string{m.st.Muted.Render("rates not reported")}
	switch {
	case q.HasRates:
		publish := format.Rate(q.PublishRate) + "/s"
		if q.IsDLQ() && q.PublishRate == 0 {
			// What the broker dead-letters here comes through no
			// channel, so it is counted as no publish.
			publish += " (the broker's dead-lettering is not counted)"
		}
		rates = []string{"publish " + publish, "ack " + format.Rate(q.AckRate) + "/s", m.drain(q)}
	case q.StatsPending:
		rates = []string{m.st.Muted.Render("consumers and rates unknown: the broker has not emitted this queue's statistics yet")}
	}
	age := m.st.Muted.Render("stats " + format.Duration(d.StatsAge+m.now().Sub(d.TakenAt)) + " old")
	// Each part whole on a line: a wrap inside "stats 5s old" or a
	// queue's name reads badly.
	lines := []string{common.JoinFit(ident, " · ", m.vp.Width)}
	if rt := format.RetryNote(q); rt != "" {
		lines = append(lines, rt)
	}
	lines = append(lines, figures, common.JoinFit(append(rates, age), " · ", m.vp.Width))
	if r := m.retryLine(q); r != "" {
		lines = append(lines, r)
	}
	if dlx := m.dlxLine(q); dlx != "" {
		lines = append(lines, dlx)
	}
	if fx := m.effectLine(); fx != "" {
		lines = append(lines, fx)
	}
	return strings.Join(lines, "\n")
}

// depthParts splits the depth: ready, delayed (RabbitMQ 4.3 quorum
// queues: waiting out a delayed retry, in the depth but not ready) and
// unacked. An unreported delayed figure is shown as unknown where the
// queue's settings ask for a delayed retry and left out elsewhere, so an
// older broker's screen reads as before. The dead letters held for the
// DLX, in the depth too, have their own line.
func depthParts(q domain.Queue) string {
	parts := []string{"ready " + format.Count(q.Ready)}
	if q.Delayed != nil || q.DelayedRetrySetting().Set() {
		parts = append(parts, "delayed "+format.CountOf(q.Delayed))
	}
	return strings.Join(append(parts, "unacked "+format.Count(q.Unacked)), ", ")
}

// retryLine is a quorum queue's delayed retry and what it holds back;
// "" when it has none, unless messages are delayed all the same.
func (m *Model) retryLine(q domain.Queue) string {
	d := q.DelayedRetrySetting()
	words := format.DelayedRetry(d)
	if words == "" || !d.Set() && (q.Delayed == nil || *q.Delayed == 0) {
		return ""
	}
	text := "delayed retry " + words
	if n := q.Delayed; n != nil && *n > 0 {
		text += fmt.Sprintf(" · %s waiting out their delay", format.Count(*n))
	}
	if n := q.ReadyReturned; n != nil && *n > 0 {
		text += fmt.Sprintf(" · %s ready after a return", format.Count(*n))
	}
	return text
}

// dlxLine is the backlog of dead letters an at-least-once quorum queue
// holds for its DLX: in the trouble tone while it grows (the judgement
// over the window, docs/ARCHITECTURE.md §4.10), else in the warning tone
// while any is held; the findings say why the target does not take them.
func (m *Model) dlxLine(q domain.Queue) string {
	held := format.DLXHeldNote(q)
	if held == "" {
		return ""
	}
	for _, mk := range m.judge.Marks(q.Ref()) {
		if mk.Kind == trouble.DLXGrowing {
			return m.st.Trouble.Render("DLX backlog: " + held + " · " + format.Mark(mk, "", m.judge.Window()) + "; see the findings below")
		}
	}
	return m.st.Warn.Render("DLX backlog: " + held + "; see the findings below")
}

// drain is the queue's movement in words, coloured by how much it
// should worry the operator: the trouble tone only while the judgement
// over the window holds a mark (docs/ARCHITECTURE.md §4.10), so the line
// does not flicker with the rates. A mark still held after the latest
// movement changed is said beside it.
func (m *Model) drain(q domain.Queue) string {
	d := q.Drain()
	text := format.DrainNote(d)
	marks := m.judge.Marks(q.Ref())
	var held []string
	marked := false
	for _, mk := range marks {
		if mk.Kind < trouble.NoConsumers {
			continue
		}
		if mk.Drain.Movement == d.Movement && (d.Movement != domain.Growing || mk.Kind == trouble.Growing) {
			marked = true
			continue
		}
		held = append(held, m.st.Trouble.Render(format.Mark(mk, "", m.judge.Window())))
	}
	switch d.Movement {
	case domain.Empty, domain.Draining:
	case domain.Growing, domain.NoConsumers, domain.Stalled:
		if marked {
			text = m.st.Trouble.Render(text)
		} else {
			text = m.st.Warn.Render(text)
		}
	case domain.Steady:
		text = m.st.Warn.Render(text)
	default:
		text = m.st.Muted.Render(text)
	}
	return strings.Join(append([]string{text}, held...), " · ")
}

// findings are the topology checks of docs/ARCHITECTURE.md §4.7 about this queue.
func (m *Model) findings(d *domain.QueueDetail) string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render("Topology warnings"))
	if len(d.Findings) == 0 {
		b.WriteString("\n  " + m.st.OK.Render("none"))
		return b.String()
	}
	for _, f := range d.Findings {
		style, mark := m.st.Warn, "~"
		if f.Severity == domain.SeverityError {
			style, mark = m.st.Trouble, "!"
		}
		line := fmt.Sprintf("%s %-7s %s: %s", mark, sanitize.Text(f.Severity), sanitize.Text(f.Check), sanitize.Text(f.Message))
		b.WriteString("\n  " + style.Render(line))
	}
	return b.String()
}

// history draws the depth and rates the API kept, oldest on the left.
func (m *Model) history(d *domain.QueueDetail) string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render("Over the last 10 minutes"))
	if len(d.Depth) == 0 && len(d.PublishRates) == 0 && len(d.AckRates) == 0 {
		b.WriteString("\n  " + m.st.Muted.Render("the management API kept no samples for this queue"))
		return b.String()
	}
	width := max(m.Width-41, 10)
	q := d.Queue
	// "now" is what the lines above say, from the same reading; the
	// samples, taken by the broker before it, draw the history, and
	// the peak counts both.
	series := []struct {
		name    string
		samples []domain.Sample
		now     float64
		known   bool
		format  func(float64) string
	}{
		{"depth", d.Depth, float64(q.Messages), true, func(v float64) string { return format.Count(int64(v)) }},
		{"publish/s", d.PublishRates, q.PublishRate, q.HasRates, format.Rate},
		{"ack/s", d.AckRates, q.AckRate, q.HasRates, format.Rate},
	}
	for _, s := range series {
		b.WriteString("\n  " + m.st.Label.Render(fmt.Sprintf("%-11s", s.name)))
		if len(s.samples) == 0 {
			none := format.Unknown + " no samples"
			if s.known && s.now == 0 && s.name != "depth" {
				none = format.Unknown + " no samples: the broker counted none in its window (0/s)"
			}
			b.WriteString(m.st.Muted.Render(none))
			continue
		}
		values := make([]float64, len(s.samples))
		peak := 0.0
		for i, p := range s.samples {
			values[i] = p.Value
			peak = max(peak, p.Value)
		}
		now := values[len(values)-1]
		if s.known {
			now = s.now
			peak = max(peak, now)
		}
		b.WriteString(sparkline.Render(values, width))
		b.WriteString(m.st.Muted.Render(fmt.Sprintf("  now %s, peak %s", s.format(now), s.format(peak))))
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
