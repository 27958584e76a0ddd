package message

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// View draws the lines that fit from the scroll offset.
func (m *Model) View() string {
	end := min(m.offset+m.rows(), len(m.lines))
	out := strings.Join(m.lines[m.offset:end], "\n")
	if end-m.offset < len(m.lines) {
		pos := fmt.Sprintf("lines %d–%d of %d", m.offset+1, end, len(m.lines))
		if end < len(m.lines) {
			pos += " · ↓/pgdn for more"
		}
		out += "\n" + m.st.Muted.Render(pos)
	}
	return m.editView(out)
}

// render lays the content out for the width; long values wrap rather than
// run off the screen.
func (m *Model) render() {
	w := max(m.Width, 20)
	m.lines = strings.Split(ansi.Wrap(m.content(w), w, ""), "\n")
	m.clamp()
}

// Layout of the fields.
const (
	labelWidth = 18
	// headerNameWidth caps the header name column; longer names are cut.
	headerNameWidth = 36
	// headerValueLines is how many wrapped lines of a header value are
	// shown; a longer value is cut, with its length stated.
	headerValueLines = 3
)

func (m *Model) content(width int) string {
	l := m.msg.Letter
	var b strings.Builder
	b.WriteString(m.st.Title.Render("Message "+sanitize.Text(l.MessageID)) + "  " +
		m.st.Muted.Render("in "+sanitize.Text(m.msg.Queue.Name)+" · vhost "+sanitize.Text(m.msg.Queue.Vhost)) + "\n")
	if m.left != "" {
		b.WriteString(m.st.Warn.Render("no longer in "+sanitize.Text(m.msg.Queue.Name)+": "+m.left+"; what follows is what it was") + "\n")
	}
	m.field(&b, "logical ID", format.LogicalIDSource(l))

	m.failure(&b, l, width)

	m.section(&b, "Dead-lettering")
	undead := len(l.Deaths) == 0
	if undead && !format.Framework(l) {
		b.WriteString("  " + m.st.Warn.Render(format.NotDeadLettered) + "\n")
	}
	if format.Framework(l) {
		b.WriteString("  " + m.st.Muted.Render("not dead-lettered by the broker: the framework moved it (above)") + "\n")
	} else if !undead || l.OriginQueue != "" {
		reason := sanitize.Text(l.Reason)
		if undead {
			// Without x-death, only headers whoever published it set.
			reason += m.st.Muted.Render(" (from x-*-death headers, not from the broker)")
		}
		m.field(&b, "reason", reason)
		m.field(&b, "origin queue", sanitize.Text(l.OriginQueue))
		m.field(&b, "origin exchange", exchange(l.OriginExchange, l.OriginQueue != ""))
		m.field(&b, "routing keys", orNone(sanitize.Text(strings.Join(l.RoutingKeys, ", "))))
	}
	m.field(&b, "attempts", fmt.Sprint(l.Attempts))
	if l.ReplayCount > 0 {
		m.field(&b, "replayed", m.st.Warn.Render(times(l.ReplayCount)+" by warren: it came back, so replaying again without a fix loops"))
	}
	if !undead {
		m.field(&b, "dead-lettered at", m.when(l.DeadLetteredAt))
	}
	m.field(&b, "quarantined", yesNo(l.Quarantined))
	if c := format.ClaimedMarks(l); c != "" {
		m.field(&b, "warren's marks", m.st.Warn.Render(c))
	}
	for _, c := range format.DeliveryCounts(l) {
		m.field(&b, c.Name, c.Value)
	}
	if l.Headroom >= 0 {
		m.field(&b, "headroom", fmt.Sprintf("%d more returns before the delivery limit", l.Headroom))
	}
	m.field(&b, "delivery", fmt.Sprintf("tag %d · redelivered %s · position %d", l.DeliveryTag, yesNo(l.Redelivered), l.Position))

	m.section(&b, "Inbox")
	m.field(&b, "status", m.inboxStatus())
	if m.msg.InboxDetail != "" {
		m.field(&b, "detail", sanitize.Text(m.msg.InboxDetail))
	}

	m.section(&b, "Properties")
	m.properties(&b, l.Properties)

	m.section(&b, "x-death")
	m.deaths(&b, l.Deaths)

	m.section(&b, "Headers")
	m.headers(&b, l.Headers, width)

	m.section(&b, "Body")
	m.body(&b, l, width)
	return strings.TrimRight(b.String(), "\n")
}

// failure says which convention the message was read by, what broke and
// where, and what the convention's headers lacked
// (docs/ARCHITECTURE.md §4.12).
func (m *Model) failure(b *strings.Builder, l domain.DeadLetter, width int) {
	f := l.Failure
	if f.Convention == "" && len(l.Deaths) > 0 {
		f.Convention = domain.ConventionBroker
	}
	m.section(b, "Failure")
	m.field(b, "read as", format.Convention(f.Convention))
	if len(f.Also) > 0 {
		m.field(b, "also carries", m.st.Warn.Render(sanitize.Text(strings.Join(f.Also, ", "))+" headers (the first convention read wins)"))
	}
	broker := f.Convention == domain.ConventionBroker
	if f.Convention == "" {
		return
	}
	if !broker {
		m.field(b, "kind", orNone(sanitize.Text(f.Kind)))
	}
	if f.ErrorType != "" {
		m.field(b, "error type", sanitize.Text(f.ErrorType))
	}
	if f.ErrorMessage != "" {
		// Up to a KiB: wrapped under its label rather than past the edge.
		indent := strings.Repeat(" ", labelWidth+3)
		wrapped := ansi.Hardwrap(sanitize.Text(f.ErrorMessage), max(width-len(indent), 20), true)
		m.field(b, "error", strings.ReplaceAll(wrapped, "\n", "\n"+indent))
	}
	switch {
	case broker:
		// The broker's origin is under Dead-lettering.
	case f.OriginQueue != "":
		m.field(b, "origin", "queue "+sanitize.Text(f.OriginQueue))
	case f.OriginExchange != "" || f.OriginRoutingKey != "":
		m.field(b, "origin", fmt.Sprintf("exchange %s, routing key %s", exchange(f.OriginExchange, false), sanitize.Text(f.OriginRoutingKey)))
	default:
		m.field(b, "origin", m.st.Warn.Render("none named: a replay needs --to"))
	}
	if !f.FailedAt.IsZero() && f.Convention != domain.ConventionBroker {
		m.field(b, "failed at", m.when(f.FailedAt))
	}
	if l.Group != "" {
		m.field(b, "group", sanitize.Text(l.Group))
	}
	if len(f.Missing) > 0 {
		m.field(b, "missing", m.st.Warn.Render(sanitize.Text(strings.Join(f.Missing, "; "))))
	}
	if f.Envelope != nil {
		m.field(b, "envelope", "the properties, headers and body below are the original message inside it")
	}
	if f.StackTrace != "" {
		trace := format.TextBlock(f.StackTrace)
		b.WriteString("  " + m.st.Label.Render("stack trace") + "\n")
		for _, line := range trace.Lines {
			b.WriteString("    " + m.st.Muted.Render(ansi.Hardwrap(line, max(width-4, 10), true)) + "\n")
		}
		if trace.More != "" {
			b.WriteString("    " + m.st.Muted.Render(trace.More) + "\n")
		}
	}
}

func (m *Model) section(b *strings.Builder, title string) {
	b.WriteString("\n" + m.st.Title.Render(title) + "\n")
}

func (m *Model) field(b *strings.Builder, label, value string) {
	fmt.Fprintf(b, "  %s %s\n", m.st.Label.Render(fmt.Sprintf("%-*s", labelWidth, label)), value)
}

func (m *Model) when(t time.Time) string {
	if t.IsZero() {
		return m.st.Muted.Render(format.Unknown)
	}
	return format.Time(t) + m.st.Muted.Render(" ("+format.Ago(m.opts.Now().Sub(t))+")")
}

func (m *Model) inboxStatus() string {
	switch m.msg.Inbox {
	case "applied":
		return m.st.OK.Render("applied") + " — the effect was committed; replaying is skipped by default"
	case "pending":
		return m.st.Warn.Render("pending") + " — no inbox row: the effect was not applied"
	}
	return m.st.Muted.Render("unknown")
}

func (m *Model) properties(b *strings.Builder, p domain.Properties) {
	mode := "—"
	switch p.DeliveryMode {
	case 1:
		mode = "1 (transient)"
	case 2:
		mode = "2 (persistent)"
	}
	rows := []struct{ k, v string }{
		{"message_id", p.MessageID}, {"correlation_id", p.CorrelationID},
		{"content_type", p.ContentType}, {"content_encoding", p.ContentEncoding},
		{"type", p.Type}, {"app_id", p.AppID}, {"user_id", p.UserID},
		{"reply_to", p.ReplyTo}, {"expiration", p.Expiration},
	}
	for _, r := range rows {
		m.field(b, r.k, orNone(sanitize.Text(r.v)))
	}
	m.field(b, "delivery_mode", mode)
	m.field(b, "priority", fmt.Sprint(p.Priority))
	m.field(b, "timestamp", m.when(p.Timestamp))
}

func (m *Model) deaths(b *strings.Builder, deaths []domain.Death) {
	if len(deaths) == 0 {
		b.WriteString("  " + m.st.Muted.Render("none: "+format.NotDeadLettered) + "\n")
		return
	}
	rows := [][]string{{"QUEUE", "REASON", "COUNT", "FIRST DEATH", "EXCHANGE", "ROUTING KEYS", "ORIG. EXPIRATION"}}
	for _, d := range deaths {
		rows = append(rows, []string{
			sanitize.Text(d.Queue), sanitize.Text(d.Reason), fmt.Sprint(d.Count), format.Time(d.Time),
			exchange(d.Exchange, true), orNone(sanitize.Text(strings.Join(d.RoutingKeys, ", "))),
			orNone(sanitize.Text(d.OriginalExpiration)),
		})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = min(max(widths[i], ansi.StringWidth(c)), 32)
		}
	}
	for n, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			c = ansi.Truncate(c, widths[i], "…")
			cells[i] = c + strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
		}
		line := "  " + strings.TrimRight(strings.Join(cells, "  "), " ")
		if n == 0 {
			line = m.st.TableHeader.Render(line)
		}
		b.WriteString(line + "\n")
	}
}

func (m *Model) headers(b *strings.Builder, h map[string]any, width int) {
	names := make([]string, 0, len(h))
	for k := range h {
		if k != "x-death" {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		b.WriteString("  " + m.st.Muted.Render("none besides x-death") + "\n")
		return
	}
	sort.Strings(names)
	w := labelWidth
	for _, k := range names {
		w = max(w, min(ansi.StringWidth(sanitize.Text(k)), headerNameWidth))
	}
	limit := max(width-w-3, 20) * headerValueLines
	for _, k := range names {
		name := ansi.Truncate(sanitize.Text(k), w, "…")
		shown, note := format.Cut(value(domain.Tables(h[k])), limit)
		v := sanitize.Text(shown)
		if note != "" {
			v += m.st.Muted.Render(note)
		}
		fmt.Fprintf(b, "  %s %s\n", m.st.Label.Render(name+strings.Repeat(" ", w-ansi.StringWidth(name))), v)
	}
}

// value renders a header value; nested tables and arrays stay on one line.
func value(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if v == "" {
			return `""`
		}
		return v
	case []byte:
		return fmt.Sprintf("bytes(%d) %s", len(v), hex.EncodeToString(v[:min(len(v), 32)]))
	case time.Time:
		return format.Time(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + value(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = value(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func (m *Model) body(b *strings.Builder, l domain.DeadLetter, width int) {
	c := &m.laid
	if c.text == "" || c.width != width || c.hex != m.hex {
		var out strings.Builder
		m.layBody(&out, l, width)
		c.width, c.hex, c.text = width, m.hex, out.String()
	}
	b.WriteString(c.text)
}

// layBody writes the body's section: its kind and size, then its text
// or bytes, as much as is shown.
func (m *Model) layBody(b *strings.Builder, l domain.DeadLetter, width int) {
	if l.Body == nil {
		b.WriteString("  " + m.st.Muted.Render("not held: this view came from a statistics scan") + "\n")
		return
	}
	body := format.BodyText(l.Body, l.Properties.ContentType, l.Properties.ContentEncoding, m.hex)
	head := body.Kind + " · " + format.Bytes(int64(len(l.Body)))
	if body.Note != "" {
		head += " · " + body.Note
	}
	b.WriteString("  " + m.st.Muted.Render(head) + "\n")
	for _, line := range body.Lines {
		b.WriteString("  " + ansi.Hardwrap(line, max(width-2, 10), true) + "\n")
	}
	if body.More != "" {
		b.WriteString("  " + m.st.Muted.Render(body.More) + "\n")
	}
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// exchange names an x-death exchange; "" is the default exchange when a
// queue is known, since publishing straight to a queue goes through it.
func exchange(name string, known bool) string {
	switch {
	case name != "":
		return sanitize.Text(name)
	case known:
		return "(default)"
	}
	return "—"
}

func orNone(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
