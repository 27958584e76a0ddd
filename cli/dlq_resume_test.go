//go:build integration

package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/testkit"
)

// countIDs takes every message off queue and counts each message ID.
func (s *actScene) countIDs(t *testing.T, queue string) map[string]int {
	t.Helper()
	ch := testkit.Channel(t, testkit.Dial(t, s.vhost))
	n := testkit.Depth(t, ch, queue)
	deliveries, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	timeout := time.After(time.Minute)
	for got := 0; got < n; got++ {
		select {
		case d := <-deliveries:
			ids[d.MessageId]++
		case <-timeout:
			t.Fatalf("read %d of %d messages of %s", got, n, queue)
		}
	}
	return ids
}

func TestDlqResumeAfterSIGKILLLosesNothingAndRemovesTheTwins(t *testing.T) {
	t.Parallel()
	testResumeAfterSIGKILL(t, 20_000, false)
}

// A kill that lands inside an append leaves the audit file ending in part
// of a record, with warren's journal of that write beside it: the resume
// sets the fragment aside, finishes the operation, and the chain
// verifies.
func TestDlqResumeAfterSIGKILLMidAuditWriteSetsTheFragmentAside(t *testing.T) {
	testResumeAfterSIGKILL(t, 5_000, true)
}

// killMidway runs warren with args in a process of its own and kills it
// (SIGKILL) once queue holds at messages.
func (s *actScene) killMidway(t *testing.T, queue string, at int, args ...string) {
	t.Helper()
	s.signalMidway(t, syscall.SIGKILL, queue, at, args...)
}

// signalMidway runs warren with args and sends it sig once queue holds
// at messages; it returns what warren printed on stderr and how it
// exited.
func (s *actScene) signalMidway(t *testing.T, sig syscall.Signal, queue string, at int, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--config", s.config}, args...)...)
	cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(time.Minute)
	for testkit.DepthNow(t, s.ch, queue) < at {
		if time.Now().After(deadline) {
			t.Fatalf("warren %v never put %d messages in %s; stderr:\n%s", args, at, queue, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := <-done
	return stderr.String(), err
}

func testResumeAfterSIGKILL(t *testing.T, n int, tornAudit bool) {
	s := newEmptyActScene(t, "")
	s.expire(t, n, nil)
	s.killMidway(t, "orders", n/4, "dlq", "replay", "orders.dlq", "--yes", "--rate", "4000")
	s.waitGivenBack(t, n)

	var fragment []byte
	if tornAudit {
		// The kill itself may have landed inside an append (a record of
		// a page's IDs spans pages of memory): that fragment, with
		// warren's own journal, is the one to set aside. Else one is
		// made as a crash leaves it.
		raw, err := os.ReadFile(s.audit)
		if err != nil {
			t.Fatal(err)
		}
		if fragment = raw[bytes.LastIndexByte(raw, '\n')+1:]; len(fragment) == 0 {
			fragment = tearLikeACrash(t, s.audit)
		}
	}

	out, errOut, err := runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, errOut)
	}
	var res resumeJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	ids := s.countIDs(t, "orders")
	dups := 0
	for _, c := range ids {
		dups += c - 1
	}
	if len(ids) != n {
		t.Fatalf("orders holds %d distinct messages after the resume, want all %d (resume: %+v)", len(ids), n, res)
	}
	// At most the copies in flight when the process died exist twice: a
	// confirm window.
	if dups > 2048 {
		t.Errorf("%d duplicates after the resume, want at most one confirm window (2048); resume: %+v", dups, res)
	}
	t.Logf("killed at %d of %d; resume: %+v; duplicates %d", n/4, n, res, dups)

	// Finished now: a second resume has nothing to do.
	_, _, err = runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--yes")
	if app.ExitCode(err) != app.ExitUsage || !strings.Contains(err.Error(), "no incomplete operation") {
		t.Errorf("a second resume: %v, want exit 2 saying there is nothing to resume", err)
	}
	if r := execCLI(t, "--config", s.config, "audit", "verify"); r.err != nil || !strings.HasPrefix(r.out, "ok: ") {
		t.Errorf("audit verify after the resume: %v\n%s", r.err, r.out)
	}
	if tornAudit {
		aside, _ := filepath.Glob(s.audit + ".torn-*")
		if len(aside) != 1 {
			t.Fatalf("set aside: %v, want the one fragment", aside)
		}
		if b, _ := os.ReadFile(aside[0]); string(b) != string(fragment) {
			t.Errorf("%s holds %q, want the fragment %q", aside[0], b, fragment)
		}
	}
}

func TestDlqResumeRefusesWhatItCannotFinish(t *testing.T) {
	s := newEmptyActScene(t, "")
	s.expire(t, 10, nil)
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	finished := decodeStreamed(t, out).Operation
	s.declare(t, "other.dlq", nil)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an unknown operation", []string{"orders.dlq", "--operation", "20990101T000000Z-00000000", "--yes"}, app.ExitUsage, "no operation 20990101T000000Z-00000000"},
		{"a finished operation", []string{"orders.dlq", "--operation", finished, "--yes"}, app.ExitUsage, "finished at"},
		{"an operation on another queue", []string{"other.dlq", "--operation", finished, "--yes"}, app.ExitUsage, "was on orders.dlq"},
		{"no incomplete operation", []string{"orders.dlq", "--yes"}, app.ExitUsage, "no incomplete operation on orders.dlq"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, err := runAction(t, s.config, newDlqResumeCmd, c.args...)
			if app.ExitCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
				t.Errorf("exit %d (%v), stderr %q: want %d saying %q", app.ExitCode(err), err, errOut, c.code, c.want)
			}
		})
	}
	t.Run("an audit store that cannot be written", func(t *testing.T) {
		cfg, _ := os.ReadFile(s.config)
		dir := t.TempDir()
		bad := filepath.Join(dir, "bad.toml")
		broken := strings.Replace(string(cfg), "audit = \"file:"+s.audit+"\"", "audit = \"file:"+dir+"\"", 1)
		if err := os.WriteFile(bad, []byte(broken), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := runAction(t, bad, newDlqResumeCmd, "orders.dlq", "--yes")
		if app.ExitCode(err) != app.ExitRefused {
			t.Errorf("exit %d (%v), want %d", app.ExitCode(err), err, app.ExitRefused)
		}
	})
	testkit.WaitDepth(t, s.ch, "orders", 10)
}

// ctrl+c at the confirmation prompt is a no: warren returns what it read
// and exits as for a refused prompt, rather than dying with dead letters
// held (which a quorum queue counts as a delivery).
func TestCtrlCAtThePromptIsANo(t *testing.T) {
	s := newEmptyActScene(t, "")
	s.expire(t, 10, nil)
	cmd := exec.Command(os.Args[0], "--config", s.config, "dlq", "replay", "orders.dlq")
	cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1")
	// The prompt needs a terminal on stdin.
	cmd.Stdin = openTerminal(t)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stderr.String(), "[y/N]") {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt; stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != app.ExitRefused || !strings.Contains(stderr.String(), "not confirmed; nothing was changed") {
		t.Fatalf("ctrl+c at the prompt: %v (exit code %d), want exit %d saying nothing was changed; stderr:\n%s", err, ee.ExitCode(), app.ExitRefused, stderr.String())
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 10)
	if n := testkit.Depth(t, s.ch, "orders"); n != 0 {
		t.Fatalf("%d messages reached orders after a no", n)
	}
}

// openTerminal opens a pseudo-terminal and returns its terminal side,
// for a child that asks only on a terminal.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal's terminal side: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}

// waitGivenBack waits until the broker has taken back what a killed
// process held: orders.dlq has no consumer left (the broker requeues a
// consumer's deliveries as it removes it) and, with orders, holds at
// least the n messages of the scene.
func (s *actScene) waitGivenBack(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		q, err := s.ch.QueueDeclarePassive("orders.dlq", true, false, false, false, nil)
		if err != nil {
			t.Fatalf("inspect orders.dlq: %v", err)
		}
		if q.Consumers == 0 && q.Messages+testkit.Depth(t, s.ch, "orders") >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed process's messages never came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
