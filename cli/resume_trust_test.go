//go:build integration

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenops/warren/testkit"
)

// interruptedReplay leaves an incomplete replay of orders.dlq in the
// scene's audit log: a real warren killed mid-run.
func interruptedReplay(t *testing.T, s *actScene, n int) {
	t.Helper()
	s.expire(t, n, nil)
	cmd := exec.Command(os.Args[0], "--config", s.config, "dlq", "replay", "orders.dlq", "--yes", "--rate", "500")
	cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for testkit.DepthNow(t, s.ch, "orders") < 50 {
		if time.Now().After(deadline) {
			t.Fatal("the replay never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	s.waitGivenBack(t, n)
}

// dlq resume acts on what the intent record says: its question states
// where the messages go, how many, and whether applied ones go too, and
// a log whose chain does not hold moves nothing.
func TestDlqResumeStatesWhatItWillDoAndTrustsNoBrokenLog(t *testing.T) {
	s := newEmptyActScene(t, "")
	testkit.Declare(t, s.ch, "victim", nil)
	interruptedReplay(t, s, 400)
	out, errOut, err := runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--dry-run")
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut)
	}
	left := testkit.Depth(t, s.ch, "orders.dlq")
	// No inbox is configured: the question does not claim the applied
	// are skipped, and a note says none can be.
	for _, want := range []string{"to queue orders (default exchange)", " of the ", "? Note: ", "inbox unknown: applied messages cannot be skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("the question does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "applied messages are skipped") {
		t.Errorf("the question says the applied are skipped, with no inbox to say which:\n%s", out)
	}
	if !strings.Contains(out, "then replay "+strconv.Itoa(left)+" of the "+strconv.Itoa(left)+" messages") {
		t.Errorf("the question does not count the %d messages it would move:\n%s", left, out)
	}

	// An intent edited to send the messages elsewhere breaks the chain.
	log, err := os.ReadFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(log, []byte(`"include_applied":"false"`), []byte(`"include_applied":"true"`), 1)
	if bytes.Equal(forged, log) {
		forged = bytes.Replace(log, []byte(`queue:orders`), []byte(`queue:victim`), 1)
	}
	if bytes.Equal(forged, log) {
		t.Fatalf("no intent field to tamper with in:\n%s", log)
	}
	if err := os.WriteFile(s.audit, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err = runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--yes")
	if err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("resume over a tampered log: %v\n%s", err, errOut)
	}
	if n := testkit.Depth(t, s.ch, "orders.dlq"); n != left {
		t.Errorf("orders.dlq holds %d after a refused resume, want %d", n, left)
	}
	if n := testkit.Depth(t, s.ch, "victim"); n != 0 {
		t.Errorf("victim received %d", n)
	}
}

// At a rate, a replay records a second's copies at a time before they
// go out: killed, it leaves no more than that recorded and unsent, which
// the resume would count as possible duplicates (a page of 512 did).
func TestAPacedReplayKilledLeavesLittleRecordedAndUnsent(t *testing.T) {
	s := newEmptyActScene(t, "")
	s.expire(t, 300, nil)
	cmd := exec.Command(os.Args[0], "--config", s.config, "dlq", "replay", "orders.dlq", "--yes", "--rate", "20")
	cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for testkit.DepthNow(t, s.ch, "orders") < 20 {
		if time.Now().After(deadline) {
			t.Fatal("the replay never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	s.waitGivenBack(t, 300)
	out, errOut, err := runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--dry-run")
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut)
	}
	m := regexp.MustCompile(`(\d+) were recorded as going out`).FindStringSubmatch(out)
	published := testkit.Depth(t, s.ch, "orders")
	if m == nil {
		t.Fatalf("the question names no copy recorded and unconfirmed:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n > published+3*20 {
		t.Errorf("%d recorded as going out without a confirm, %d published: a kill at 20/s should leave two seconds' worth at most\n%s", n, published, out)
	}
}
