package queuedetail

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// setting is one line of the settings section: a policy key, its value
// and where the value comes from.
type setting struct {
	key     string
	def     string // what applies when neither argument nor policy sets it
	millis  bool   // value is a duration in milliseconds
	numeric bool   // a limit: with both set, the smaller applies
	// delayedRetry marks RabbitMQ 4.3's delayed-retry keys: shown only
	// for a quorum queue whose broker reports the setting or whose
	// arguments or policy set it.
	delayedRetry bool
}

// settingKeys are the settings that decide where messages go when they
// die or overflow, in the order an operator reads them.
var settingKeys = []setting{
	{key: "dead-letter-exchange", def: "none: dead letters are dropped"},
	{key: "dead-letter-routing-key", def: "the message's own routing keys"},
	{key: "dead-letter-strategy", def: "at-most-once"},
	{key: "message-ttl", def: "none", millis: true, numeric: true},
	{key: "expires", def: "never", millis: true, numeric: true},
	{key: "max-length", def: "none", numeric: true},
	{key: "max-length-bytes", def: "none", numeric: true},
	{key: "overflow", def: "drop-head"},
	{key: "delivery-limit", def: "none", numeric: true},
	{key: "delayed-retry-type", def: "disabled", delayedRetry: true},
	{key: "delayed-retry-min", def: "broker default", millis: true, delayedRetry: true},
	{key: "delayed-retry-max", def: "broker default", millis: true, delayedRetry: true},
}

// settings shows the arguments and the policy side by side with the value
// that wins, so an operator sees why a queue behaves as it does.
func (m *Model) settings(d *domain.QueueDetail) string {
	q := d.Queue
	var b strings.Builder
	policy := "no policy applies"
	if q.Policy != "" {
		policy = "policy " + sanitize.Text(q.Policy)
	}
	b.WriteString(m.st.Title.Render("Dead lettering and limits") + m.st.Muted.Render(" ("+policy+")"))
	for _, s := range settingKeys {
		if s.key == "dead-letter-strategy" && q.Type != "quorum" {
			continue
		}
		if s.key == "delivery-limit" && q.Type != "quorum" {
			continue
		}
		if s.delayedRetry && !showsDelayedRetry(q) {
			continue
		}
		value, source := m.settingValue(q, s)
		if s.key == "delivery-limit" {
			value, source = deliveryLimit(q, d.DeliveryLimit, value, source)
		}
		b.WriteString("\n  " + m.st.Label.Render(pad(s.key, 24)) + " " + pad(value, 32) + " " + m.st.Muted.Render(source))
	}
	b.WriteString("\n  " + m.st.Label.Render(pad("paired DLQ", 24)) + " " + m.pairedDLQ(q))
	return b.String()
}

// showsDelayedRetry says whether the delayed-retry keys belong on the
// screen: a quorum queue whose broker says its delayed retry is on (4.3)
// or that sets one of them. A queue without one is not burdened with
// three lines of defaults.
func showsDelayedRetry(q domain.Queue) bool {
	if q.Type != "quorum" {
		return false
	}
	d := q.DelayedRetrySetting()
	return d.Set() || d.Type != "" || d.Min >= 0 || d.Max >= 0
}

func (m *Model) settingValue(q domain.Queue, s setting) (value, source string) {
	arg, hasArg := q.Arguments["x-"+s.key]
	pol, hasPol := q.EffectiveDefinition[s.key]
	switch {
	case hasArg && hasPol && fmt.Sprint(arg) != fmt.Sprint(pol):
		// RabbitMQ takes the smaller of the two for limits and the
		// argument otherwise; show both so the conflict is visible.
		if n, ok := q.LimitSetting(s.key); ok && s.numeric {
			return settingText(n, s), fmt.Sprintf("argument %s, policy %s: the smaller applies", settingText(arg, s), settingText(pol, s))
		}
		return settingText(arg, s), "argument (policy says " + settingText(pol, s) + ")"
	case hasArg:
		return settingText(arg, s), "argument"
	case hasPol:
		return settingText(pol, s), "policy"
	}
	return m.st.Muted.Render(s.def), "default"
}

func deliveryLimit(q domain.Queue, limit int64, value, source string) (string, string) {
	if limit < 0 {
		if q.HasDLX {
			return "none", source + "; poison messages can loop forever"
		}
		return "none", source
	}
	if source == "default" {
		return fmt.Sprint(limit), "broker default (RabbitMQ 4.0+)"
	}
	return value, source
}

func (m *Model) pairedDLQ(q domain.Queue) string {
	switch {
	case q.DLQ != nil:
		depth := fmt.Sprintf(" (%s messages)", format.Count(q.DLQMessages))
		if q.DLQMessages > 0 {
			depth = m.st.Warn.Render(depth)
		}
		return format.QueueName(q.DLQ.Vhost, q.DLQ.Name) + depth + m.st.Muted.Render("  d opens it")
	case q.RetryTarget != nil:
		return m.st.Muted.Render("none: dead letters go back to " + sanitize.Text(q.RetryTarget.Name) + " (retry loop)")
	case q.HasDLX:
		return m.st.Trouble.Render("none found: the dead-letter exchange routes to no queue")
	}
	return m.st.Muted.Render("none")
}

func settingText(v any, s setting) string {
	text := sanitize.Text(fmt.Sprint(v))
	if !s.millis {
		return text
	}
	var ms float64
	switch n := v.(type) {
	case float64:
		ms = n
	case int64:
		ms = float64(n)
	case int:
		ms = float64(n)
	default:
		return text
	}
	if ms < 1000 {
		return text + " ms"
	}
	return fmt.Sprintf("%s ms (%s)", text, format.Duration(time.Duration(ms)*time.Millisecond))
}

// pad fills s, which may carry styles, to w cells.
func pad(s string, w int) string {
	return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
}
