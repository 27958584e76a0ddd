package channels

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"
)

// tickMsg asks the screen to read the channels again.
type tickMsg struct{ common.Stamp }

// listMsg carries the channels (or why they could not be read) to the
// screen that asked.
type listMsg struct {
	common.Stamp
	List *domain.ChannelList
	Err  error
}

func fetch(l Lister, vhost string, stamp common.Stamp, timeout time.Duration) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		list, err := l.Channels(ctx, vhost)
		return listMsg{Stamp: stamp, List: list, Err: err}
	}
}

func tick(after time.Duration, stamp common.Stamp) tea.Cmd {
	return tea.Tick(after, func(time.Time) tea.Msg { return tickMsg{Stamp: stamp} })
}
