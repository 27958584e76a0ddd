package table

import (
	"fmt"
	"strconv"
	"time"

	"github.com/warrenops/warren/ui/sanitize"
)

// Unknown is what a cell shows for a figure nobody knows; the view says
// why elsewhere, so the table never invents a value.
const Unknown = "—"

// Count formats a message count exactly up to 999 999 and compactly
// beyond, so it fits six cells.
func Count(n int64) string {
	switch {
	case n < 1_000_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fG", float64(n)/1e9)
}

// Rate formats a per-second rate in at most five cells.
func Rate(r float64) string {
	switch {
	case r == 0:
		return "0"
	case r < 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	case r < 1000:
		return strconv.FormatFloat(r, 'f', 0, 64)
	case r < 1e6:
		return strconv.FormatFloat(r/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(r/1e6, 'f', 1, 64) + "M"
}

// Duration formats a duration in at most six cells, with its two largest
// units: 45s, 10m05s, 1h05m, 3d04h.
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}

// Period formats a configured span (a TTL) like Duration, except that a
// span under a second keeps its milliseconds: a TTL of 250 ms is not 0s.
func Period(d time.Duration) string {
	if d > 0 && d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return Duration(d)
}

// QueueName names a queue for people: the name alone in the default vhost
// "/", else with its vhost. The result is sanitised.
func QueueName(vhost, name string) string {
	if vhost == "/" || vhost == "" {
		return sanitize.Text(name)
	}
	return sanitize.Text(name) + " (vhost " + sanitize.Text(vhost) + ")"
}
