package live

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/sources/brokertest"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

// pump runs a screen as the program would: commands in goroutines, their
// messages back into Update.
type pump struct {
	t    *testing.T
	s    common.Screen
	msgs chan tea.Msg
	out  []tea.Msg
}

func (p *pump) run(cmd tea.Cmd) {
	if cmd != nil {
		go func() { p.msgs <- cmd() }()
	}
}

func (p *pump) send(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			p.run(c)
		}
	case common.ErrorMsg, common.InfoMsg:
		p.out = append(p.out, msg)
	default:
		s, cmd := p.s.Update(msg)
		p.s = s
		p.run(cmd)
	}
}

func (p *pump) until(what string, cond func(view string) bool) {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond(p.s.View()) {
		select {
		case msg := <-p.msgs:
			p.send(msg)
		case <-deadline:
			p.t.Fatalf("timed out waiting for %s; reported %v; view:\n%s", what, p.out, p.s.View())
		}
	}
}

func (p *pump) keys(s string) {
	for _, r := range s {
		p.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func TestTheDLQScreenReplaysAFilteredSelectionOnARealBroker(t *testing.T) {
	vhost := brokertest.Vhost(t, "warren-live")
	rejectedScene(t, vhost, 3)
	l := newLive(t, ordersContext())
	scr := l.Screens(styles.New(true)).NewDLQ(mgmt.QueueRef{Vhost: vhost, Name: "orders.dlq"})
	p := &pump{t: t, s: scr, msgs: make(chan tea.Msg, 64)}
	p.s.SetSize(120, 40)
	t.Cleanup(func() {
		if c, ok := p.s.(common.Closer); ok {
			if cmd := c.Close(); cmd != nil {
				cmd()
			}
		}
	})
	p.run(p.s.Init())
	p.until("three held letters with their inbox status", func(v string) bool {
		return strings.Contains(v, "3 held") && strings.Count(v, "unknown") >= 3
	})

	p.keys("/")
	p.keys(`logical_id == "ev-b"`)
	p.send(tea.KeyMsg{Type: tea.KeyEnter})
	p.keys("*r")
	p.until("the plan prompt", func(v string) bool { return strings.Contains(v, "Proceed? [y/N]") })
	if v := p.s.View(); !strings.Contains(v, "Replay 1 message") || !strings.Contains(v, "queue orders (default exchange)") {
		t.Fatalf("the prompt does not state the plan:\n%s", v)
	}
	p.keys("y")
	p.until("the result", func(v string) bool { return strings.Contains(v, "1 confirmed") })
	p.until("the held letters to refresh", func(v string) bool { return strings.Contains(v, "2 held") })
	brokertest.WaitDepth(t, brokertest.Channel(t, testConn(t, vhost)), "orders", 1)
}
