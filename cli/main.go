package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/overview"
)

// inEditor is set while `dlq edit` runs the operator's editor.
var inEditor atomic.Bool

// Main runs warren with the process's arguments and streams and returns
// the exit code (docs/ARCHITECTURE.md §5).
func Main() int {
	ops.RemoveStaleDrafts()
	defer ops.RemoveDrafts()
	a := NewApp()
	out := &checkedWriter{w: a.Out}
	a.Out = out
	// The first ctrl+c (or SIGTERM) ends the command's context, so that a
	// command holding dead letters returns them with a nack and a prompt
	// takes it for a no, instead of the process dying with them held,
	// which a quorum queue counts as a delivery. A second one kills, and
	// so does SIGHUP (the terminal is gone, and the dashboard would not
	// notice a cancelled context); either first removes the edit draft,
	// which holds a message's body.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	handled := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		// Under nohup it stays ignored, as the operator asked.
		handled = append(handled, syscall.SIGHUP)
	}
	signal.Notify(sigs, handled...)
	defer signal.Stop(sigs)
	go func() {
		cancelled := false
		for sig := range sigs {
			switch {
			case sig == os.Interrupt && inEditor.Load():
				// The terminal sends ctrl+c to the editor's process
				// group, warren's too: it is the editor's key (nano
				// shows the cursor's place with it).
				continue
			case sig != syscall.SIGHUP && !cancelled:
				cancelled = true
				cancel()
				continue
			}
			ops.RemoveDrafts()
			signal.Reset(sig)
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
			return
		}
	}()
	if err := NewRoot(a, RunDashboard).ExecuteContext(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// What the command says of its state (nothing written,
			// nothing taken) goes with it.
			if msg := err.Error(); msg != context.Canceled.Error() {
				fmt.Fprintln(os.Stderr, "warren: interrupted:", sanitize.Message(msg))
			} else {
				fmt.Fprintln(os.Stderr, "warren: interrupted")
			}
			return app.ExitFailure
		}
		if !app.IsQuiet(err) {
			// Parts of an error were sanitised where they were made: its
			// lines are kept, and no escape is made twice.
			fmt.Fprintln(os.Stderr, "warren:", sanitize.Message(err.Error())+flagHint(err))
		}
		return app.ExitCode(err)
	}
	if out.err != nil {
		// A report that did not reach its file (a full disk, a closed
		// pipe) is a failure, whatever the command made of it.
		fmt.Fprintln(os.Stderr, "warren: writing the output:", sanitize.Message(out.err.Error()))
		return app.ExitFailure
	}
	return app.ExitOK
}

// checkedWriter keeps the first error writing to w: commands print with
// fmt.Fprint*, which returns it to no one.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// RunDashboard runs the dashboard on the terminal until the operator
// quits.
func RunDashboard(a *App) error {
	toFleet, err := a.dashboard()
	if err != nil || !toFleet {
		return err
	}
	return runFleet(a, true)
}

// dashboard runs the dashboard on the chosen context, and on each the
// context switcher chooses after it, until the operator quits (toFleet
// false) or chooses the fleet view.
func (a *App) dashboard() (toFleet bool, err error) {
	if _, err := a.Factory().Config(); err != nil {
		return false, err
	}
	if !IsTerminal(os.Stdout) || !IsTerminal(os.Stdin) {
		return false, app.Usage(errors.New("the dashboard needs a terminal; for scripts use `warren status`, `warren dlq ls` and --json"))
	}
	// The audit file's mode is warned of before the dashboard takes the
	// terminal, and never under it.
	if st, err := a.Factory().AuditStore(); err == nil {
		st.Close()
	}
	a.Factory().TerminalTaken()
	var debug io.Writer
	if a.Debug != "" {
		f, err := os.OpenFile(a.Debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return false, app.Usage(fmt.Errorf("--debug: %w", err))
		}
		defer f.Close()
		debug = f
	}
	defer dashboardMemory()()
	for {
		next, toFleet, err := a.dashboardOnce(debug)
		if err != nil || next == "" {
			return toFleet, err
		}
		// The switcher chose another context: every client and screen
		// is built again for it, in this process.
		a.ContextName, a.f = next, nil
		if _, err := a.Factory().Config(); err != nil {
			return false, err
		}
		a.Factory().TerminalTaken()
	}
}

// dashboardOnce runs the dashboard on the factory's context until it
// ends; next is the context the switcher chose, "" when it quit or chose
// the fleet view (toFleet).
func (a *App) dashboardOnce(debug io.Writer) (next string, toFleet bool, err error) {
	model, release, err := a.Factory().Dashboard(debug)
	if err != nil {
		return "", false, err
	}
	defer release()
	type arranged interface {
		OverviewSettings() overview.Settings
		RestoreOverview(overview.Settings)
	}
	name := ""
	if c, err := a.Factory().Config(); err == nil {
		name = c.Name
	}
	if v, ok := a.views[name]; ok {
		if m, ok := model.(arranged); ok {
			m.RestoreOverview(v)
		}
	}
	final, err := tea.NewProgram(model, tea.WithAltScreen(), terminalInput()).Run()
	if m, ok := final.(arranged); ok && err == nil {
		if a.views == nil {
			a.views = map[string]overview.Settings{}
		}
		// What an overview watched is kept for the context just left
		// alone: the one a round trip comes back to.
		for k, v := range a.views {
			a.views[k] = v.Forget()
		}
		a.views[name] = m.OverviewSettings()
	}
	if s, ok := final.(interface {
		SwitchTo() string
		ToFleet() bool
	}); ok && err == nil {
		return s.SwitchTo(), s.ToFleet(), nil
	}
	return "", false, err
}

// flagHint names the flag that takes a refusal's risk on the command
// line, which the refusal (shared with the DLQ screen, where a key does)
// only calls allowing it explicitly.
func flagHint(err error) string {
	var refused *domain.RefusedError
	if errors.As(err, &refused) && !strings.Contains(err.Error(), "--allow-limit-risk") {
		return " (--allow-limit-risk)"
	}
	return ""
}
