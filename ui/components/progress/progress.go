// Package progress draws an operation's progress: a bar, the rate, and a
// counter per outcome, so the operator sees not just how far it got but
// what happened to each message.
package progress

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/ui/styles"
)

// Counts are an operation's figures so far. Done counts messages with an
// outcome; the outcome counters add up to it.
type Counts struct {
	Total     int
	Done      int
	Confirmed int
	Returned  int
	Nacked    int
	Unknown   int
}

// Model is the progress of one operation.
type Model struct {
	title   string
	st      styles.Styles
	counts  Counts
	started time.Time
	now     time.Time
	width   int
	note    string
	// reading: an operation that publishes nothing (an export) has no
	// outcomes to count.
	reading bool
}

// New starts a progress display at started; times come from the caller so
// views never read the clock.
func New(title string, total int, started time.Time, st styles.Styles) Model {
	return Model{title: title, st: st, counts: Counts{Total: total}, started: started, now: started}
}

// Set records the figures as of now.
func (m *Model) Set(c Counts, now time.Time) {
	m.counts = c
	if now.After(m.now) {
		m.now = now
	}
}

// Reading marks an operation that reads and publishes nothing: the view
// leaves out the confirmed, returned, nacked and unknown counters.
func (m *Model) Reading() { m.reading = true }

// SetNote sets a line drawn under the counters (a staged replay's stage
// and pace); "" draws none. It must already be sanitised.
func (m *Model) SetNote(note string) { m.note = note }

// SetTitle renames the operation's state, e.g. once it is cancelling.
func (m *Model) SetTitle(title string) { m.title = title }

// Counts returns the figures so far.
func (m Model) Counts() Counts { return m.counts }

// SetWidth sets the width the bar may use.
func (m *Model) SetWidth(w int) { m.width = w }

// Rate is messages per second since the start; 0 before any time passed.
func (m Model) Rate() float64 {
	secs := m.now.Sub(m.started).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(m.counts.Done) / secs
}

// figuresWidth is kept for the text after the bar, so the bar does not
// change length as the figures grow.
const figuresWidth = 28

// View draws the title, the bar with done/total and rate, and the counters.
func (m Model) View() string {
	c := m.counts
	frac := 0.0
	if c.Total > 0 {
		frac = min(float64(c.Done)/float64(c.Total), 1)
	}
	figures := fmt.Sprintf(" %d/%d  %3.0f%%  %s", c.Done, c.Total, frac*100, rate(m.Rate()))
	barW := max(m.width-figuresWidth-2, 10)
	filled := int(frac * float64(barW))
	bar := "[" + m.st.OK.Render(strings.Repeat("#", filled)) + m.st.Muted.Render(strings.Repeat(".", barW-filled)) + "]"
	var out strings.Builder
	out.WriteString(m.st.Title.Render(m.title) + "\n")
	out.WriteString(bar + figures)
	if !m.reading {
		out.WriteString("\n" + m.counter("confirmed", c.Confirmed, m.st.OK) + "  " +
			m.counter("returned", c.Returned, m.st.Warn) + "  " +
			m.counter("nacked", c.Nacked, m.st.Trouble) + "  " +
			m.counter("unknown", c.Unknown, m.st.Trouble))
	}
	if m.note != "" {
		out.WriteString("\n" + m.st.Value.Render(m.note))
	}
	return out.String()
}

func (m Model) counter(label string, n int, st lipgloss.Style) string {
	if n == 0 {
		return m.st.Muted.Render(fmt.Sprintf("%s 0", label))
	}
	return st.Render(fmt.Sprintf("%s %d", label, n))
}

// rate is the operation's pace in the words of every other rate; before
// any time has passed there is none to tell.
func rate(r float64) string {
	if r == 0 {
		return format.Unknown + "/s"
	}
	return format.PerSecond(r)
}
