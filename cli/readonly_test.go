//go:build integration

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/ui/common"
)

// vhostChannel is a channel of the harness's own in vhost.
func vhostChannel(t *testing.T, vhost string) *amqp.Channel {
	t.Helper()
	return testkit.Channel(t, testkit.Dial(t, vhost))
}

// ready is a queue's ready count once settled (as testkit.Depth reads
// it: a read just after a client gave deliveries back can come ahead of
// the requeue), -1 when the queue does not exist.
func ready(t *testing.T, vhost, queue string) int {
	t.Helper()
	return testkit.Settled(func() int { return readyNow(t, vhost, queue) })
}

// readyNow is one read of a queue's ready count, -1 when the queue does
// not exist.
func readyNow(t *testing.T, vhost, queue string) int {
	t.Helper()
	q, err := vhostChannel(t, vhost).QueueDeclarePassive(queue, true, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return -1
	}
	if err != nil {
		t.Fatalf("inspect %s: %v", queue, err)
	}
	return q.Messages
}

func waitReady(t *testing.T, vhost, queue string, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for got := readyNow(t, vhost, queue); got != want; got = readyNow(t, vhost, queue) {
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages, want %d", queue, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deadLetter publishes msgs to origin and rejects each there without
// requeue, so the broker dead-letters them into dlq.
// tuiModel wires the dashboard to a's context as main.go does.
func tuiModel(t *testing.T, a *App, debug io.Writer) tea.Model {
	t.Helper()
	model, release, err := a.Factory().Dashboard(debug)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return model
}

// screenLog keeps everything a test program drew, for later checks.
type screenLog struct{ bytes.Buffer }

// waitScreen reads the program's output until it shows text.
func (l *screenLog) waitScreen(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	if bytes.Contains(l.Bytes(), []byte(text)) {
		return
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		l.Write(b)
		return bytes.Contains(l.Bytes(), []byte(text))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// roScene is a vhost where the broker rejected three messages from orders
// into orders.dlq, and a config whose audit file starts absent.
type roScene struct {
	vhost, dir, audit string
}

func newROScene(t *testing.T) *roScene {
	t.Helper()
	s := &roScene{vhost: testkit.Vhost(t, "warren-cli-readonly"), dir: t.TempDir()}
	s.audit = filepath.Join(s.dir, "audit.jsonl")
	ch := vhostChannel(t, s.vhost)
	for _, q := range []struct {
		name string
		args amqp.Table
	}{{"orders.dlq", nil}, {"orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}}} {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []amqp.Publishing
	for i := range 3 {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("ro-%d", i), Body: []byte("{}")})
	}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", msgs)
	t.Setenv("WARREN_RO_TEST_PASSWORD", "guest")
	return s
}

// config writes a config for the scene with extra keys in its context.
func (s *roScene) config(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(s.dir, fmt.Sprintf("warren-%d.toml", len(extra)))
	text := fmt.Sprintf(`current_context = "t"
[contexts.t]
amqp_url = %q
management_url = %q
username = "guest"
password_env = "WARREN_RO_TEST_PASSWORD"
vhost = %q
audit = "file:%s"
%s`, testAMQP, testMgmt, s.vhost, s.audit, extra)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// untouched checks that no message moved and no audit record exists.
func (s *roScene) untouched(t *testing.T) {
	t.Helper()
	// The DLQ screen's session gives its deliveries back as the screen
	// closes, in the background: wait for them, then check nothing else
	// moved.
	waitReady(t, s.vhost, "orders.dlq", 3)
	if got := ready(t, s.vhost, "orders"); got != 0 {
		t.Errorf("orders received %d messages", got)
	}
	if got := ready(t, s.vhost, "orders.dlq.quarantine"); got != -1 {
		t.Errorf("a parking queue was declared (%d messages)", got)
	}
	if _, err := os.Stat(s.audit); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the audit log was written: %v", err)
	}
}

func TestReadOnlyRefusesEveryChangingCommandWithExitThree(t *testing.T) {
	s := newROScene(t)
	plain, readOnly := s.config(t, ""), s.config(t, "read_only = true\n")
	tests := []struct {
		name string
		args []string
	}{
		{"--read-only refuses replay", []string{"--config", plain, "--read-only", "dlq", "replay", "orders.dlq", "--yes"}},
		{"--read-only refuses replay --json", []string{"--config", plain, "--read-only", "dlq", "replay", "orders.dlq", "--yes", "--json"}},
		{"--read-only refuses quarantine", []string{"--config", plain, "--read-only", "dlq", "quarantine", "orders.dlq", "--yes", "--reason", "r"}},
		{"read_only = true refuses replay", []string{"--config", readOnly, "dlq", "replay", "orders.dlq", "--yes"}},
		{"read_only = true refuses quarantine", []string{"--config", readOnly, "dlq", "quarantine", "orders.dlq", "--yes", "--reason", "r"}},
		{"--read-only=false does not lift read_only = true", []string{"--config", readOnly, "--read-only=false", "dlq", "replay", "orders.dlq", "--yes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := execCLI(t, tc.args...)
			if r.code() != app.ExitRefused {
				t.Fatalf("exit %d (%v), want %d", r.code(), r.err, app.ExitRefused)
			}
			if !strings.Contains(r.err.Error(), "read-only") {
				t.Errorf("the refusal does not say why: %v", r.err)
			}
			// The flag is named as the cause, not the context.
			if flag := slices.Contains(tc.args, "--read-only") && !strings.Contains(strings.Join(tc.args, " "), "read-only=false"); flag != strings.Contains(r.err.Error(), "--read-only: ") {
				t.Errorf("the refusal names the wrong cause: %v", r.err)
			}
			if strings.TrimSpace(r.out) != "" {
				t.Errorf("a refused command printed %q", r.out)
			}
			s.untouched(t)
		})
	}
}

func TestReadOnlyStillShowsPlansAndReads(t *testing.T) {
	s := newROScene(t)
	readOnly := s.config(t, "read_only = true\n")
	for _, args := range [][]string{
		{"dlq", "replay", "orders.dlq", "--dry-run"},
		{"dlq", "quarantine", "orders.dlq", "--dry-run", "--reason", "r"},
		{"dlq", "ls", "orders.dlq"},
		{"dlq", "stats", "orders.dlq"},
	} {
		if r := execCLI(t, append([]string{"--config", readOnly}, args...)...); r.err != nil {
			t.Errorf("%s in a read-only context: %v", strings.Join(args, " "), r.err)
		}
	}
	s.untouched(t)
}

func TestReadOnlyDashboardOffersNoActionAndMovesNothing(t *testing.T) {
	s := newROScene(t)
	tests := []struct {
		name     string
		config   string
		readOnly bool
	}{
		{"--read-only", s.config(t, ""), true},
		{"read_only = true", s.config(t, "read_only = true\n"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &App{ConfigPath: tc.config, ReadOnly: tc.readOnly, In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}
			tm := teatest.NewTestModel(t, tuiModel(t, a, nil), teatest.WithInitialTermSize(140, 40))
			var screen screenLog
			screen.waitScreen(t, tm, "READ-ONLY")
			tm.Send(common.OpenDLQMsg{Queue: domain.QueueRef{Vhost: s.vhost, Name: "orders.dlq"}})
			screen.waitScreen(t, tm, "ro-2")
			tm.Type(" ")
			tm.Type("r")
			screen.waitScreen(t, tm, "read-only context: replay is disabled")
			tm.Type("Q")
			screen.waitScreen(t, tm, "read-only context: quarantine is disabled")
			tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
			tm.Type("q")
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
			s.untouched(t)
		})
	}
}

func TestReadOnlyRefusesABrowsePastTheGuardAndTheDemoSeed(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	r := execCLI(t, "--config", s.config, "--read-only", "dlq", "ls", "orders.dlq", "--allow-limit-risk")
	if r.code() != app.ExitRefused || !strings.Contains(r.errOut, "read-only") || !strings.Contains(r.errOut, "--allow-limit-risk") {
		t.Errorf("ls --allow-limit-risk in a read-only context: exit %d\n%s", r.code(), r.errOut)
	}
	if r := execCLI(t, "--config", s.config, "--read-only", "dlq", "ls", "orders.dlq"); r.code() != 0 {
		t.Errorf("a browse within the guard is read-only's to allow: exit %d\n%s", r.code(), r.errOut)
	}
	if n := ready(t, s.vhost, "orders.dlq"); n != 4 {
		t.Errorf("orders.dlq holds %d, want 4", n)
	}
	r = execCLI(t, "--read-only", "demo", "--seed-only", "--vhost", s.vhost+"-demo")
	if r.code() != app.ExitRefused || !strings.Contains(r.errOut, "demo refused") {
		t.Errorf("demo in read-only: exit %d\n%s", r.code(), r.errOut)
	}
}
