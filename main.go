// Command warren is a terminal dashboard and CLI for RabbitMQ on-call
// operators: live queue and dead-letter views joined with the consumers'
// inbox, and audited replay and quarantine of dead letters.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/cli"
)

func main() {
	app := cli.NewApp()
	if err := cli.NewRoot(app, runTUI).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "warren:", err)
		os.Exit(cli.ExitCode(err))
	}
}

// runTUI runs the dashboard on the terminal until the operator quits.
func runTUI(app *cli.App) error {
	if _, err := app.Config(); err != nil {
		return err
	}
	if !cli.IsTerminal(os.Stdout) || !cli.IsTerminal(os.Stdin) {
		return cli.Usage(errors.New("the dashboard needs a terminal; for scripts use `warren status`, `warren dlq ls` and --json"))
	}
	var debug io.Writer
	if app.Debug != "" {
		f, err := os.OpenFile(app.Debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return cli.Usage(fmt.Errorf("--debug: %w", err))
		}
		defer f.Close()
		debug = f
	}
	model, release, err := app.Dashboard(debug)
	if err != nil {
		return err
	}
	defer release()
	_, err = tea.NewProgram(model, tea.WithAltScreen()).Run()
	return err
}
