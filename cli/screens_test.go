//go:build integration

package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/sources/broker"
	"github.com/warrenops/warren/sources/dlqfile"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

// screenScene has the broker dead-letter three order events (logical IDs
// ev-a, ev-b, ev-c in header event_id) from orders into orders.dlq, and
// returns the DLQ screen the dashboard would open on it.
func screenScene(t *testing.T) (vhost string, scr common.Screen) {
	t.Helper()
	vhost = testkit.Vhost(t, "warren-screens")
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	var msgs []amqp.Publishing
	for _, id := range []string{"ev-a", "ev-b", "ev-c"} {
		msgs = append(msgs, amqp.Publishing{MessageId: "m-" + id, DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"event_id": id}, Body: []byte(`{"id":"` + id + `"}`)})
	}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", msgs)

	m, err := mgmt.New(mgmt.Options{URL: testkit.MgmtURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	auditPath := t.TempDir() + "/audit.jsonl"
	o, err := ops.New(ops.Clients{
		Context: &config.Context{Name: "test", Username: "guest", Queues: []config.Queue{
			{Name: "orders", LogicalID: "header:event_id"},
		}},
		Operator: "tester", Mgmt: m,
		Dial: func(vhost string) (*amqp.Connection, error) {
			u := strings.Replace(testkit.AMQPURL, "guest:guest@", "", 1)
			return broker.Dial(broker.Options{URL: u, Username: "guest", Password: "guest", Vhost: vhost, Name: "warren screens test"})
		},
		OpenAudit: func() (audit.Store, error) { return audit.OpenFile(auditPath) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return vhost, app.NewScreens(nil, o, styles.New(true)).NewDLQ(domain.QueueRef{Vhost: vhost, Name: "orders.dlq"})
}

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
	vhost, scr := screenScene(t)
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
	p.until("the plan prompt", func(v string) bool { return strings.Contains(v, "Proceed? (y goes on, n or esc cancels)") })
	if v := p.s.View(); !strings.Contains(v, "Replay 1 message") || !strings.Contains(v, "queue orders (default exchange)") {
		t.Fatalf("the prompt does not state the plan:\n%s", v)
	}
	p.keys("y")
	p.until("the result", func(v string) bool { return strings.Contains(v, "1 confirmed") })
	p.until("the held letters to refresh", func(v string) bool { return strings.Contains(v, "2 held") })
	testkit.WaitDepth(t, testkit.Channel(t, testkit.Dial(t, vhost)), "orders", 1)
}

func TestTheDLQScreenShowsWholeQueueStatisticsOnARealBroker(t *testing.T) {
	_, scr := screenScene(t)
	p := &pump{t: t, s: scr, msgs: make(chan tea.Msg, 64)}
	p.s.SetSize(120, 40)
	t.Cleanup(func() {
		if cmd := p.s.(common.Closer).Close(); cmd != nil {
			cmd()
		}
	})
	p.run(p.s.Init())
	p.until("three held letters", func(v string) bool { return strings.Contains(v, "3 held") })
	p.keys("S")
	p.until("the whole queue's figures", func(v string) bool {
		return strings.Contains(v, "3 messages, 3 held") && strings.Contains(v, "reasons (whole queue)")
	})
}

// E writes the whole queue to the file named, the page the screen held
// first, in order; the queue keeps every message, the screen browses
// again, and the audit log records the export with the file's sha256.
func TestTheDLQScreenExportsTheQueueToAFileOnARealBroker(t *testing.T) {
	vhost, scr := screenScene(t)
	p := &pump{t: t, s: scr, msgs: make(chan tea.Msg, 64)}
	p.s.SetSize(400, 40) // the result names the file whole on one line
	t.Cleanup(func() {
		if cmd := p.s.(common.Closer).Close(); cmd != nil {
			cmd()
		}
	})
	p.run(p.s.Init())
	p.until("three held letters", func(v string) bool { return strings.Contains(v, "3 held") })
	out := filepath.Join(t.TempDir(), "orders.dlq.jsonl.gz")
	p.keys("E")
	p.until("the question", func(v string) bool { return strings.Contains(v, "Write every message of orders.dlq to a file") })
	p.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	p.keys(out)
	p.send(tea.KeyMsg{Type: tea.KeyEnter})
	p.until("the result and the page again", func(v string) bool {
		return strings.Contains(v, "exported 3 of the 3 messages read from orders.dlq to "+out) && strings.Contains(v, "3 held")
	})
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := dlqfile.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.Letter().LogicalID)
	}
	if rd.Header.Count != 3 || rd.Header.Vhost != vhost || strings.Join(ids, ",") != "ev-a,ev-b,ev-c" {
		t.Errorf("the file holds %v (header count %d, vhost %q), want ev-a, ev-b, ev-c in order", ids, rd.Header.Count, rd.Header.Vhost)
	}
	if v := p.s.View(); !strings.Contains(v, "audit operation ") {
		t.Errorf("the result does not name the audit operation:\n%s", v)
	}
	p.s.(common.Closer).Close()()
	testkit.WaitDepth(t, testkit.Channel(t, testkit.Dial(t, vhost)), "orders.dlq", 3)
}
