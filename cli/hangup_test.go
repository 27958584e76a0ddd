//go:build integration

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A terminal that hangs up signals its session's leader alone. Here the
// leader is a shell that takes the SIGHUP and waits on, as make does
// under `make demo` in a tmux pane that is closed: the dashboard only
// reads the end of its input, and must end as if the SIGHUP were its
// own, not go on polling the broker with no one to see it.
func TestTheDashboardEndsWhenItsTerminalHangsUp(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	s := newEmptyActScene(t, "")
	master, tty := openPTY(t)
	defer master.Close()
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatalf("size the terminal: %v", err)
	}
	status := filepath.Join(t.TempDir(), "status")
	cmd := exec.Command("sh", "-c", `trap : HUP; "$0" "$@"; echo $? > `+status, os.Args[0], "--config", s.config)
	cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1", "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		// The shell's child, warren, is its process group's too.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})

	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	seen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return screen.String()
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(seen(), "orders.dlq") {
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard never showed the scene's queues; the terminal read:\n%q", seen())
		}
		time.Sleep(20 * time.Millisecond)
	}

	master.Close() // the terminal hangs up
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the dashboard still runs 15 s after its terminal hung up")
	}
	b, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	// The shell gives 128 + the signal for a process a signal ended.
	if got := strings.TrimSpace(string(b)); got != fmt.Sprint(128+int(syscall.SIGHUP)) {
		t.Errorf("the dashboard ended with status %s, want %d (SIGHUP)", got, 128+int(syscall.SIGHUP))
	}
}
