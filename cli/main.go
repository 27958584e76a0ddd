package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/ui/sanitize"
)

// Main runs warren with the process's arguments and streams and returns
// the exit code (docs/ARCHITECTURE.md §5).
func Main() int {
	app := NewApp()
	// The first ctrl+c (or SIGTERM) ends the command's context, so that a
	// command holding dead letters returns them with a nack and a prompt
	// takes it for a no, instead of the process dying with them held,
	// which a quorum queue counts as a delivery. A second one kills.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
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
