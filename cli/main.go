package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/ui/sanitize"
)

// inEditor is set while `dlq edit` runs the operator's editor.
var inEditor atomic.Bool

// Main runs warren with the process's arguments and streams and returns
// the exit code (docs/ARCHITECTURE.md §5).
func Main() int {
	app := NewApp()
	// The first ctrl+c (or SIGTERM) ends the command's context, so that a
	// command holding dead letters returns them with a nack and a prompt
	// takes it for a no, instead of the process dying with them held,
	// which a quorum queue counts as a delivery. A second one kills.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			if sig == os.Interrupt && inEditor.Load() {
				// The terminal sends ctrl+c to the editor's process
				// group, warren's too: it is the editor's key (nano
				// shows the cursor's place with it).
				continue
			}
			cancel()
			signal.Stop(sigs)
			return
		}
	}()
	if err := NewRoot(app, RunDashboard).ExecuteContext(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "warren: interrupted")
			return ExitFailure
		}
		fmt.Fprintln(os.Stderr, "warren:", sanitize.Text(err.Error()))
		return ExitCode(err)
	}
	return ExitOK
}

// RunDashboard runs the dashboard on the terminal until the operator
// quits.
func RunDashboard(app *App) error {
	if _, err := app.Config(); err != nil {
		return err
	}
	if !IsTerminal(os.Stdout) || !IsTerminal(os.Stdin) {
		return Usage(errors.New("the dashboard needs a terminal; for scripts use `warren status`, `warren dlq ls` and --json"))
	}
	var debug io.Writer
	if app.Debug != "" {
		f, err := os.OpenFile(app.Debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return Usage(fmt.Errorf("--debug: %w", err))
		}
		defer f.Close()
		debug = f
	}
	model, release, err := app.Dashboard(debug)
	if err != nil {
		return err
	}
	defer release()
	defer dashboardMemory()()
	_, err = tea.NewProgram(model, tea.WithAltScreen()).Run()
	return err
}
