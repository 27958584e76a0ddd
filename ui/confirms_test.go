package ui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/channels"
)

// fakeChannels lists the channels of list.
type fakeChannels struct{ list *domain.ChannelList }

func (f fakeChannels) Channels(context.Context, string) (*domain.ChannelList, error) {
	return f.list, nil
}

func confirming(name string, n int64) domain.ChannelStat {
	yes := true
	return domain.ChannelStat{Name: name, Confirm: &yes, Unconfirmed: &n}
}

// loaded is the root after its first snapshot and its first count of
// unconfirmed publishes.
func loaded(t *testing.T, list *domain.ChannelList) Model {
	t.Helper()
	m := newRoot(Options{Context: "prod-eu", Environment: "prod", ReadOnly: true, Channels: fakeChannels{list}})
	m, _ = step(t, m, m.overview.Init()())
	m, _ = step(t, m, m.pollConfirms()())
	return m
}

func TestHeaderCountsUnconfirmedPublishesAcrossChannels(t *testing.T) {
	no, zero := false, int64(0)
	tests := []struct {
		name string
		list *domain.ChannelList
		want string
	}{
		{"pending on two channels", &domain.ChannelList{Channels: []domain.ChannelStat{
			confirming("gw", 33), confirming("import", 4), confirming("idle", 0),
			{Name: "consumer", Confirm: &no, Unconfirmed: &zero},
		}}, "unconfirmed 37 on 2 channels · RabbitMQ"},
		{"one channel", &domain.ChannelList{Channels: []domain.ChannelStat{confirming("gw", 1)}}, "unconfirmed 1 on 1 channel · RabbitMQ"},
		{"nothing pending", &domain.ChannelList{Channels: []domain.ChannelStat{confirming("gw", 0)}}, "confirms: none pending · RabbitMQ"},
		{"no channel statistics", &domain.ChannelList{Note: "channel details unavailable"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := loaded(t, tt.list)
			first := strings.Split(m.View(), "\n")[0]
			if tt.want == "" {
				if strings.Contains(first, "confirm") {
					t.Errorf("header %q counts what the broker did not report", first)
				}
				return
			}
			if !strings.Contains(first, tt.want) || len([]rune(first)) > 120 {
				t.Errorf("header %q, want %q within 120 columns", first, tt.want)
			}
			if second := strings.Split(m.View(), "\n")[1]; !strings.Contains(second, "stats") {
				t.Errorf("the status line lost its figures' age: %q", second)
			}
		})
	}
}

func TestNarrowHeaderDropsTheCountBeforeTheBroker(t *testing.T) {
	m := loaded(t, &domain.ChannelList{Channels: []domain.ChannelStat{confirming("gw", 37)}})
	m, _ = step(t, m, resize(80, 40))
	first := strings.Split(m.View(), "\n")[0]
	if strings.Contains(first, "unconfirmed") || !strings.Contains(first, "RabbitMQ") {
		t.Errorf("at 80 columns: %q", first)
	}
}

func TestCOpensTheChannelsScreenAndEscGoesBack(t *testing.T) {
	m := loaded(t, &domain.ChannelList{Channels: []domain.ChannelStat{confirming("gw", 37)}})
	m, cmd := step(t, m, press("c"))
	if _, ok := m.top().(*channels.Model); !ok || cmd == nil {
		t.Fatalf("c opened %T", m.top())
	}
	m, _ = step(t, m, cmd())
	if v := m.View(); !strings.Contains(v, "Queues › Channels") || !strings.Contains(v, "unconfirmed 37 on 1 channel") {
		t.Errorf("channels screen:\n%s", v)
	}
	m, _ = step(t, m, press("c"))
	if len(m.stack) != 1 {
		t.Errorf("c on the channels screen stacked another: %d screens", len(m.stack))
	}
	m, _ = step(t, m, press("esc"))
	if len(m.stack) != 0 {
		t.Errorf("esc left %d screens", len(m.stack))
	}
}

func TestChannelsScreenNeedsAManagementClient(t *testing.T) {
	m := newRoot(Options{})
	m, _ = step(t, m, press("c"))
	if len(m.stack) != 0 || !strings.Contains(m.View(), "the channels screen is not available") {
		t.Errorf("view:\n%s", m.View())
	}
}

func resize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// Confirms in flight are a working publisher's: the count is shown
// quietly, and raised as a warning only when publishes were pending at
// two counts a poll apart.
func TestPendingConfirmsWarnOnlyWhenTheyStay(t *testing.T) {
	m := newRoot(Options{})
	pending := func(n int64) confirmsMsg {
		return confirmsMsg{confirms: confirms{known: true, unconfirmed: n, channels: 1}}
	}
	for i, c := range []struct {
		n    int64
		held bool
	}{{1, false}, {2, true}, {0, false}, {3, false}, {3, true}} {
		m, _ = step(t, m, pending(c.n))
		if m.confirms.held != c.held {
			t.Errorf("count %d (%d pending): held %v, want %v", i+1, c.n, m.confirms.held, c.held)
		}
	}
}
