package cli

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"
)

// hangupInput is a full-screen view's standard input. A terminal that
// hangs up sends SIGHUP to its session's leader alone: when that is not
// warren (`make demo` in a closed tmux pane, a shell that does not pass
// the signal on), warren only reads the end of its input, which
// Bubble Tea takes for no more keys, and the dashboard would go on
// polling the broker, and holding what a browse holds, for no one. A read
// that finds the terminal gone (end of file, or EIO) is taken as the
// SIGHUP the terminal meant: Main's handler removes the edit draft and
// ends the process, and under nohup, which ignores SIGHUP as the operator
// asked, nothing happens.
type hangupInput struct {
	*os.File
	once   sync.Once
	hangup func()
}

func (h *hangupInput) Read(p []byte) (int, error) {
	n, err := h.File.Read(p)
	if n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO)) {
		h.once.Do(h.hangup)
	}
	return n, err
}

// terminalInput is the input option of every full-screen view: the
// terminal on standard input, whose hangup ends warren as SIGHUP does.
func terminalInput() tea.ProgramOption {
	return tea.WithInput(&hangupInput{File: os.Stdin, hangup: raiseHangup})
}

// raiseHangup sends the process the SIGHUP its terminal's hangup did not.
func raiseHangup() { _ = syscall.Kill(os.Getpid(), syscall.SIGHUP) }
