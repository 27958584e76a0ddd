package deadletters

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/ui/common"
)

func (m *Model) nextPage() tea.Cmd {
	switch {
	case m.state != browsing:
		return common.ReportError(fmt.Errorf("no browse session on %s: press R to reopen", m.ref.Name))
	case m.loading:
		return nil
	case m.scan.running:
		return common.ReportError(fmt.Errorf("a whole-queue scan holds the messages of %s; the next page waits for it to end (esc cancels it)", m.ref.Name))
	}
	// After the end, n asks for what arrived since: the session reads
	// it, or says there is none.
	m.loading, m.askedAfterEnd = true, m.end
	return nextCmd(m.ctx, m.session, m.sid)
}

func (m *Model) opened(msg openedMsg) tea.Cmd {
	m.ticking = false
	if msg.sid != m.sid {
		return closeCmd(m.life, msg.sid)
	}
	if msg.err != nil {
		// An override the open refused (a read-only context) covers
		// nothing after it: not the whole-queue scan either.
		m.allowRisk = false
		if r, ok := isRefused(msg.err); ok {
			m.state, m.refusal = refused, r
			return nil
		}
		m.state, m.stateErr = failed, msg.err
		return common.ReportError(fmt.Errorf("browsing %s failed: %w; press R to retry", m.ref.Name, msg.err))
	}
	m.session, m.state = msg.session, browsing
	m.loading = true
	return tea.Batch(nextCmd(m.ctx, m.session, m.sid), watchCmd(m.session, m.sid))
}

func (m *Model) paged(msg pageMsg) tea.Cmd {
	if msg.sid != m.sid {
		return nil
	}
	m.loading = false
	if msg.err != nil {
		return common.ReportError(fmt.Errorf("reading the next page of %s failed: %w; press n to retry or R to reopen", m.ref.Name, msg.err))
	}
	m.end = msg.page.End
	if msg.page.Depth > 0 && m.depth == 0 {
		m.depth = msg.page.Depth // when opened: later pages count what arrived since
	}
	var none tea.Cmd
	if m.askedAfterEnd && m.end && len(msg.page.Letters) == 0 {
		none = common.Info(fmt.Sprintf("all of %s is held: nothing arrived since", m.ref.Name))
	}
	m.askedAfterEnd = false
	for _, n := range msg.page.Notes {
		m.addNote(n)
	}
	m.held.letters = append(m.held.letters, msg.page.Letters...)
	inbox := m.held.inbox
	var ids []string
	for _, l := range msg.page.Letters {
		if _, seen := inbox[l.LogicalID]; seen {
			continue
		}
		switch {
		case l.BusinessID() == "":
			inbox[l.LogicalID] = inboxStatus{state: domain.InboxUnknown, detail: "no logical ID (content hash): the inbox cannot know this message"}
		default:
			inbox[l.LogicalID] = inboxStatus{}
			ids = append(ids, l.LogicalID)
		}
	}
	m.held.refresh()
	var tick tea.Cmd
	if !m.ticking {
		m.ticking, m.now = true, m.opts.Now()
		tick = deadlineCmd(m.sid)
	}
	if len(ids) == 0 {
		return tea.Batch(tick, none)
	}
	return tea.Batch(tick, none, inboxCmd(m.ctx, m.deps.Inbox, m.ref, ids, m.sid))
}

// deadlineMsg is a tick of the session's countdown.
type deadlineMsg struct {
	sid int64
	at  time.Time
}

func deadlineCmd(sid int64) tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return deadlineMsg{sid: sid, at: t} })
}

// deadlineTick moves the countdown on while the session browses.
func (m *Model) deadlineTick(msg deadlineMsg) tea.Cmd {
	if msg.sid != m.sid || m.state != browsing || m.session == nil {
		m.ticking = false
		return nil
	}
	m.now = msg.at
	return deadlineCmd(m.sid)
}

// deadlineLine says when the session gives its messages back: "returns
// its messages in 4m: the queue's x-consumer-timeout"; "" when it knows
// of no timeout.
func (m *Model) deadlineLine() string {
	if m.session == nil || m.state != browsing {
		return ""
	}
	at, why := m.session.Deadline()
	if at.IsZero() {
		return ""
	}
	left := max(at.Sub(m.now), 0).Round(time.Second)
	return fmt.Sprintf("returns its messages in %s, before %s would take them", format.Duration(left), why)
}

func (m *Model) addNote(n string) {
	for _, have := range m.notes {
		if have == n {
			return
		}
	}
	m.notes = append(m.notes, n)
}

func (m *Model) inboxAnswered(msg inboxMsg) {
	if msg.sid != m.sid {
		return
	}
	inbox := m.held.inbox
	for _, id := range msg.asked {
		st := inboxStatus{state: domain.InboxStatusOf(msg.applied, msg.err, id)}
		switch st.state {
		case domain.InboxUnknown:
			st.detail = "the inbox did not answer"
			if msg.err != nil {
				st.detail = msg.err.Error()
			}
		case domain.InboxApplied:
			st.at = msg.applied[id]
		default:
			st.detail = "no inbox row for this logical ID"
		}
		inbox[id] = st
	}
	m.inboxNote = ""
	if msg.err != nil {
		m.inboxNote = "inbox unknown: " + msg.err.Error()
	}
	m.held.refresh()
}

func (m *Model) sessionDone(msg sessionDoneMsg) tea.Cmd {
	if msg.sid != m.sid || m.state != browsing {
		return nil
	}
	m.state, m.stateErr, m.loading = died, msg.err, false
	m.session = nil
	closeDead := closeCmd(m.life, msg.sid) // its connection is still open
	why := "it was closed"
	if msg.err != nil {
		why = msg.err.Error()
	}
	return tea.Batch(closeDead, common.ReportError(fmt.Errorf("browse session on %s ended (%s); its messages went back to the queue; press R to reopen", m.ref.Name, why)))
}
