package deadletters

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
)

// scan is the whole-queue statistics: a scan running, the last figures,
// or why there are none.
type scan struct {
	*env
	id      int64
	running bool
	read    int // messages read so far
	stop    context.CancelFunc
	whole   *whole
	refused string // why the last scan was refused
	show    bool   // the panel shows the whole queue, not the held page
}

type scanProgressMsg struct {
	id   int64
	read int
	ch   <-chan int
}

type scanMsg struct {
	id    int64
	stats *domain.Stats
	err   error
}

// Update handles the scan's messages; a figure of a scan that is no
// longer running is dropped by its ID. shown is true when the panel
// turned to the whole queue's figures, which the held messages join.
func (s *scan) Update(msg tea.Msg, held []domain.DeadLetter) (cmd tea.Cmd, shown bool) {
	switch msg := msg.(type) {
	case scanProgressMsg:
		return s.progressed(msg), false
	case scanMsg:
		return s.scanned(msg, held)
	}
	return nil, false
}

// toggle starts a scan, or goes back from the whole queue's figures to
// the held messages'.
func (s *scan) toggle(pageLoading, allowRisk bool) tea.Cmd {
	switch {
	case s.running:
		return nil
	case s.show:
		s.show = false
		return nil
	case s.deps.Scanner == nil:
		return common.ReportError(errors.New("whole-queue statistics are not available in this session"))
	case pageLoading:
		// A scan would take the messages the page is waiting for.
		return common.ReportError(fmt.Errorf("a page of %s is loading; press S again once it is in", s.ref.Name))
	}
	ctx, stop := context.WithCancel(s.ctx)
	*s = scan{env: s.env, id: nextID(), running: true, stop: stop, whole: s.whole}
	ch := make(chan int, 16)
	return tea.Batch(scanCmd(ctx, s.deps.Scanner, s.ref, allowRisk, s.id, ch), waitScan(ch, s.id))
}

// cancel stops a running scan; its messages go back to the queue.
func (s *scan) cancel() {
	if s.running {
		s.stop()
	}
}

func (s *scan) progressed(msg scanProgressMsg) tea.Cmd {
	if msg.id != s.id || !s.running {
		return nil
	}
	s.read = msg.read
	return waitScan(msg.ch, msg.id)
}

func (s *scan) scanned(msg scanMsg, held []domain.DeadLetter) (tea.Cmd, bool) {
	if msg.id != s.id || !s.running {
		return nil, false
	}
	s.stop()
	s.running, s.stop = false, nil
	if r, ok := isRefused(msg.err); ok {
		s.refused = r.Reason
		return nil, false
	}
	switch {
	case errors.Is(msg.err, context.Canceled):
		return common.Info("whole-queue scan of " + s.ref.Name + " cancelled; its messages went back to the queue"), false
	case msg.err != nil:
		return common.ReportError(fmt.Errorf("scanning %s for statistics failed: %w; press S to retry", s.ref.Name, msg.err)), false
	}
	s.whole = merge(msg.stats, held, s.opts.Now())
	s.show = true
	return nil, true
}

// scanCmd runs the scan; progress goes to ch without ever blocking it.
func scanCmd(ctx context.Context, s Scanner, ref domain.QueueRef, allowRisk bool, id int64, ch chan int) tea.Cmd {
	return func() tea.Msg {
		defer close(ch)
		st, err := s.Scan(ctx, ref, allowRisk, func(read int) {
			select {
			case ch <- read:
			default:
			}
		})
		return scanMsg{id: id, stats: st, err: err}
	}
}

// waitScan delivers the next progress figure and is re-armed for as
// long as the channel is open.
func waitScan(ch <-chan int, id int64) tea.Cmd {
	return func() tea.Msg {
		n, ok := <-ch
		if !ok {
			return nil
		}
		return scanProgressMsg{id: id, read: n, ch: ch}
	}
}

// whole is the statistics of the whole queue: what the scan read plus
// what this screen holds, which the scan cannot see.
type whole struct {
	total, held      int
	bytes            int64
	attempts         map[int]int
	reasons, origins map[string]int
	loops, parked    int
	oldest           time.Time
	complete         bool
	expected         int
	unread           int // ready after the scan started, not counted
	others           int // held by other clients, not counted
	at               time.Time
	took             time.Duration
	// groups are the failure groups of the whole queue, nil when the
	// scan counted none.
	groups []domain.Group
}

func merge(st *domain.Stats, held []domain.DeadLetter, at time.Time) *whole {
	h := domain.NewHistogram()
	w := &whole{
		total: st.Total + len(held), held: len(held), bytes: st.Bytes,
		attempts: h.Attempts, reasons: h.Reasons, origins: h.Origins,
		loops: st.ReplayLoops, parked: st.Quarantined, oldest: st.OldestDeadLettered,
		complete: st.Complete, expected: st.Expected, unread: st.Unread, at: at, took: st.Took,
		// The scan counts what this screen holds as held too.
		others: max(st.Held-len(held), 0),
	}
	for _, l := range held {
		h.Add(l)
		w.bytes += int64(l.Size)
		if l.ReplayCount > 0 {
			w.loops++
		}
		if l.Quarantined {
			w.parked++
		}
		if t := l.DeadLetteredAt; !t.IsZero() && (w.oldest.IsZero() || t.Before(w.oldest)) {
			w.oldest = t
		}
	}
	for k, n := range st.Attempts {
		w.attempts[k] += n
	}
	for k, n := range st.Reasons {
		w.reasons[k] += n
	}
	for k, n := range st.Origins {
		w.origins[k] += n
	}
	if st.Groups != nil {
		w.groups = addGroups(st.Groups.List(), held)
	}
	return w
}

// scanLines say that a scan runs, or why the last one was refused.
func (m *Model) scanLines() []string {
	switch {
	case m.scan.running:
		return []string{m.st.Muted.Render(fmt.Sprintf("scanning the whole queue for statistics: %d read · esc cancels", m.scan.read))}
	case m.scan.refused != "":
		return []string{m.st.Warn.Render("Whole-queue statistics refused: " + sanitize.Text(m.scan.refused))}
	}
	return nil
}

// wholeSummary heads the whole queue's histograms: how many, how big,
// how old, how many loop, and when the figures were taken; one line
// each, for the caller to lay out.
func (m *Model) wholeSummary(w *whole) []string {
	lines := []string{
		m.st.Title.Render("Whole queue at " + w.at.Format("15:04:05")),
		fmt.Sprintf("%s, %d held · %s", format.Messages(w.total), w.held, format.Bytes(w.bytes)),
		fmt.Sprintf("oldest %s · scan took %s", format.Age(m.opts.Now(), w.oldest), format.Elapsed(w.took)),
	}
	loops := fmt.Sprintf("↻ %d replay loops · %d quarantined", w.loops, w.parked)
	if w.loops > 0 {
		loops = m.st.Warn.Render(loops)
	}
	lines = append(lines, loops)
	if !w.complete {
		lines = append(lines, m.st.Warn.Render(fmt.Sprintf("incomplete: read %d of the %d ready at the start", w.total-w.held, w.expected)))
	}
	if w.unread > 0 {
		lines = append(lines, m.st.Warn.Render(fmt.Sprintf("%d ready since, not counted", w.unread)))
	}
	if w.others > 0 {
		lines = append(lines, m.st.Warn.Render(fmt.Sprintf("%d held by others, not counted", w.others)))
	}
	return lines
}
