//go:build integration

package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenops/warren/testkit"
)

// The draft holds the message's body: a warren stopped by a signal while
// the editor is open must not leave it in the temporary directory. The
// editor here never exits; it notes its PID and the draft's path.
func TestAnEditDraftIsRemovedOnEverySignalThatStopsWarren(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	tests := []struct {
		name    string
		signals []syscall.Signal // sent in turn until warren is gone
		killer  syscall.Signal
	}{
		{"SIGHUP", []syscall.Signal{syscall.SIGHUP}, syscall.SIGHUP},
		{"a second SIGTERM", []syscall.Signal{syscall.SIGTERM}, syscall.SIGTERM},
		{"ctrl+c, the editor's key, then a second SIGTERM", []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}, syscall.SIGTERM},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			marker := filepath.Join(tmp, "editor-started")
			editorScript := filepath.Join(t.TempDir(), "editor.sh")
			script := "#!/bin/sh\necho \"$$ $1\" > " + marker + ".part && mv " + marker + ".part " + marker + "\nexec sleep 120\n"
			if err := os.WriteFile(editorScript, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "--config", s.config, "dlq", "edit", "orders.dlq", "--id", "E-2", "--yes")
			cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1", "TMPDIR="+tmp, "EDITOR="+editorScript)
			// A file, not a pipe: the orphaned editor keeps what it
			// inherited open, and Wait would wait for a pipe's end.
			stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			cmd.Stderr = stderr
			errText := func() string {
				b, _ := os.ReadFile(stderr.Name())
				return string(b)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill() })

			var editorPID int
			var draft string
			deadline := time.Now().Add(time.Minute)
			for {
				if b, err := os.ReadFile(marker); err == nil {
					pid, path, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
					editorPID, _ = strconv.Atoi(pid)
					draft = path
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the editor never started; stderr:\n%s", errText())
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Cleanup(func() { _ = syscall.Kill(editorPID, syscall.SIGKILL) })
			want := filepath.Join(tmp, "warren-edit-"+strconv.Itoa(cmd.Process.Pid)+"-")
			if !strings.HasPrefix(draft, want) {
				t.Fatalf("the draft is %s, want it named %s….json", draft, want)
			}
			if _, err := os.Stat(draft); err != nil {
				t.Fatalf("no draft while the editor runs: %v", err)
			}

			// A signal may find warren still handling the one before; the
			// last one is sent again until warren is gone.
			i := 0
		wait:
			for {
				if err := cmd.Process.Signal(tc.signals[min(i, len(tc.signals)-1)]); err != nil && !errors.Is(err, os.ErrProcessDone) {
					t.Fatal(err)
				}
				i++
				select {
				case err = <-done:
					break wait
				case <-time.After(200 * time.Millisecond):
				}
				if i > 100 {
					t.Fatalf("warren outlived %d signals; stderr:\n%s", i, errText())
				}
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("warren ended with %v, want killed by %v", err, tc.killer)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != tc.killer {
				t.Errorf("warren ended with %v, want killed by %v; stderr:\n%s", err, tc.killer, errText())
			}
			left, _ := filepath.Glob(filepath.Join(tmp, "warren-edit-*"))
			if len(left) > 0 {
				t.Errorf("drafts left behind: %v", left)
			}
			// The broker takes back what the dead process held.
			testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
			if n := testkit.Depth(t, s.ch, "orders"); n != 0 {
				t.Errorf("orders holds %d, want nothing published", n)
			}
		})
	}
}
