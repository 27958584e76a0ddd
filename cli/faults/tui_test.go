//go:build faults

package faults

import (
	"bytes"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/cli"
)

// The dashboard against the real broker: it shows the outage while the
// broker is down, and comes back by itself when the broker returns.
func TestFaultDashboardShowsTheOutageAndRecovers(t *testing.T) {
	onBrokers(t, singleNodes, testDashboardOutage)
}

func testDashboardOutage(t *testing.T, b *broker) {
	s := newScene(t, b, "tui")
	conn := s.dial(t)
	ch := s.channel(t, conn)
	if _, err := ch.QueueDeclare("tui.visible", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	c := writeConfig(t, s, setup{})
	t.Setenv(passwordEnv, "guest")
	a := cli.NewApp()
	a.ConfigPath = c.path
	model, release, err := a.Factory().Dashboard(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	tm := teatest.NewTestModel(t, model, teatest.WithInitialTermSize(120, 40))
	t.Cleanup(func() { _ = tm.Quit() })
	screen := func(what string, want string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
			teatest.WithDuration(90*time.Second), teatest.WithCheckInterval(100*time.Millisecond))
		t.Logf("dashboard shows %s", what)
	}
	screen("the queue", "tui.visible")
	b.stopBroker(t)
	screen("the outage", "disconnected, retrying")
	b.startBroker(t)
	screen("the broker again", "running")
}
