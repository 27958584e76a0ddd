package ui

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
)

// confirms is what the header knows of publishers waiting for the
// broker's confirms (docs/ARCHITECTURE.md §4.9).
type confirms struct {
	known       bool // a listing arrived and the broker keeps channel statistics
	unconfirmed int64
	channels    int
	// held says the count before this one had publishes pending too:
	// confirms in flight are a working publisher's; pending at two
	// counts a poll apart, they are waited for.
	held bool
}

// confirmsTick asks the root to count unconfirmed publishes again;
// confirmsMsg carries the count.
type (
	confirmsTick struct{}
	confirmsMsg  struct{ confirms confirms }
)

// pollConfirms lists every channel in a command and sums the unconfirmed
// publishes of those in confirm mode. A failure leaves the count out of
// the header (the overview's line already says the API failed).
func (m Model) pollConfirms() tea.Cmd {
	l := m.o.Channels
	if l == nil {
		return nil
	}
	vhost, timeout := m.o.Vhost, max(5*m.confirmsEvery(), 15*time.Second)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		list, err := l.Channels(ctx, vhost)
		if err != nil || list.Note != "" {
			return confirmsMsg{}
		}
		n, on := list.Confirms()
		return confirmsMsg{confirms: confirms{known: true, unconfirmed: n, channels: on}}
	}
}

// confirmsEvery is the count's pace: the refresh, but no faster than the
// broker recomputes channel figures.
func (m Model) confirmsEvery() time.Duration {
	return max(m.o.Refresh, domain.DefaultStatsInterval)
}

// confirmsText is the header's part: "unconfirmed 37 on 2 channels",
// "confirms: none pending", or nothing while unknown.
func (m Model) confirmsText() string {
	if !m.confirms.known {
		return ""
	}
	text := format.Confirms(m.confirms.unconfirmed, m.confirms.channels)
	if m.confirms.unconfirmed > 0 && m.confirms.held {
		return m.st.Warn.Render(text)
	}
	return m.st.Muted.Render(text)
}

func (m Model) openChannels() (tea.Model, tea.Cmd) {
	if m.o.NewChannels == nil {
		return m.fail(errors.New("the channels screen is not available: no management client"))
	}
	return m.push(m.o.NewChannels())
}
