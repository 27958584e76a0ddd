// Package format turns facts into words: counts, rates, durations, ages,
// sizes, times, a queue's movement and a dead letter's logical ID. The
// dashboard and the command line both word a fact through it, so an
// operator who reads one never has to translate the other.
//
// It is pure: no styles, no terminal, no I/O. A view decides the colour;
// this package decides the words.
package format

import (
	"fmt"
	"strconv"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

// Unknown stands for a figure nobody knows; the text around it says why,
// so no figure is ever invented.
const Unknown = "—"

// Count is a message count, exact up to 999 999 and compact beyond, so it
// fits six cells.
func Count(n int64) string {
	switch {
	case n < 1_000_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fG", float64(n)/1e9)
}

// Plural counts things in a sentence: "1 dead letter", "17 dead
// letters".
func Plural[N ~int | ~int64](n N, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(int64(n), 10) + " " + thing + "s"
}

// Messages counts messages in a sentence: "1 message", "37 messages".
func Messages(n int) string {
	if n == 1 {
		return "1 message"
	}
	return strconv.Itoa(n) + " messages"
}

// Rate is a per-second rate in at most five cells.
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

// PerSecond is a rate with its unit, for running text.
func PerSecond(r float64) string { return Rate(r) + "/s" }

// Duration is a span in at most six cells for anything under 2 700
// years: 12s, 4m05s, 21h04m, 3d04h, and whole days from ten days on
// (335d), where the hours no longer matter to anyone. A negative span
// (clock skew) is 0s.
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
	case s < 10*86400:
		return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
	}
	return fmt.Sprintf("%dd", s/86400)
}

// DurationWidth is how many cells a column needs to show every Duration
// up to longest without cutting one. Words for shorter spans can be wider
// than for longer ones (9d23h against 335d), but none under 100 000 days
// takes more than six cells, and from there on the width only grows, so
// the longest span shown is all a column needs to know.
func DurationWidth(longest time.Duration) int {
	return max(durationCells, len(Duration(longest)))
}

// durationCells is the widest Duration of a span under 100 000 days.
const durationCells = 6

// Period is a configured span (a TTL) like Duration, except that a span
// under a second keeps its milliseconds: a TTL of 250 ms is not 0s.
func Period(d time.Duration) string {
	if d > 0 && d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return Duration(d)
}

// Elapsed is how long a piece of work took; it keeps milliseconds
// because a scan of a small queue takes less than a second.
func Elapsed(d time.Duration) string { return d.Round(time.Millisecond).String() }

// Age is how long ago at was, as of now; Unknown for a zero time.
func Age(now, at time.Time) string {
	if at.IsZero() {
		return Unknown
	}
	return Duration(now.Sub(at))
}

// Ago is a span before now in running text: "5h07m ago".
func Ago(d time.Duration) string { return Duration(d) + " ago" }

// Time is an instant in UTC, RFC 3339, so that a time read on screen can
// be pasted into a query or `warren audit --since`; Unknown for a zero
// time.
func Time(t time.Time) string {
	if t.IsZero() {
		return Unknown
	}
	return t.UTC().Format(time.RFC3339)
}

// Bytes is a size in binary multiples: 512 B, 1.5 KiB, 3.0 MiB. The
// plan's question (actions), which may not import ui, words sizes through
// the same dlq.Size.
func Bytes(n int64) string { return domain.Size(n).String() }

// QueueName names a queue for people: the name alone in the default vhost
// "/", else with its vhost. The result is sanitised.
func QueueName(vhost, name string) string {
	if vhost == "/" || vhost == "" {
		return sanitize.Text(name)
	}
	return sanitize.Text(name) + " (vhost " + sanitize.Text(vhost) + ")"
}

// AuditHead is the audit log's head after an operation, as its last
// words name it for the operator's ticket: " · audit head seq N
// sha256:…"; "" when it is not known (docs/ARCHITECTURE.md §4.6).
func AuditHead(h *domain.AuditHead) string {
	if h == nil {
		return ""
	}
	return " · audit head " + h.String()
}

// Outcome says what an operation did, in one line: the command line's
// result and the dashboard's line under the table.
func Outcome(action, queue string, c domain.Counts) string {
	var s string
	if action == "import" {
		s = fmt.Sprintf("import %s: %d read from %s, %d confirmed, %d returned, %d nacked, %d unknown",
			c.Operation, c.Taken, queue, c.Confirmed, c.Returned, c.Nacked, c.Unknown)
		if c.Deduplicated > 0 {
			s += fmt.Sprintf(", %d confirmed before the interruption and not published again", c.Deduplicated)
		}
		if c.NotSent > 0 {
			s += fmt.Sprintf(", %d not sent", c.NotSent)
		}
		if c.Cancelled {
			s += " (cancelled)"
		}
		return s
	}
	if action == "resume" {
		s = fmt.Sprintf("resumed %s: %d twins removed, %d published again (%d possible duplicates), %d confirmed, %d returned, %d nacked, %d unknown, %d skipped as applied",
			c.Operation, c.Deduplicated, c.Selected, c.PossibleDuplicates, c.Confirmed, c.Returned, c.Nacked, c.Unknown, c.SkippedApplied)
	} else {
		s = fmt.Sprintf("%s %s: %d selected, %d skipped as applied, %d confirmed, %d returned, %d nacked, %d unknown",
			action, c.Operation, c.Selected, c.SkippedApplied, c.Confirmed, c.Returned, c.Nacked, c.Unknown)
	}
	if c.NotSent > 0 {
		s += fmt.Sprintf(", %d not sent (still in the DLQ)", c.NotSent)
	}
	if c.Taken > 0 {
		// Every message read and not moved (nor removed as a twin) is
		// still in the queue: those the plan left, and those a return,
		// a nack, a stop or an unknown outcome kept there. "Of them":
		// a run stopped by --limit leaves others, never read.
		s += fmt.Sprintf("; %d read, %d moved, %d of them still in %s", c.Taken, c.Moved, max(c.Taken-c.Moved-c.Deduplicated, 0), queue)
	}
	if c.Cancelled {
		s += " (cancelled)"
	}
	return s
}
