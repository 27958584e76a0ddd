package cli

import (
	"errors"
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/ui/fleet"
	"github.com/warrenops/warren/ui/styles"
)

func newFleetCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "fleet",
		Short: "Every context of the config on one screen; enter opens one's dashboard",
		Long: "One row per context: cluster, version, nodes up, alarms, queues in trouble, dead\n" +
			"letters and their growth, the deepest DLQ and the oldest dead letter, read in\n" +
			"parallel with a timeout each, so a context that does not answer says so and\n" +
			"holds no other back (docs/ARCHITECTURE.md §3.6). C in a dashboard opened from\n" +
			"here comes back to it. For scripts: warren status\n" +
			"--all-contexts --json, or --check.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return RunFleet(a) },
	}
}

// RunFleet shows the fleet view; enter on a context opens its dashboard,
// whose context switcher leads back to the fleet (or to another
// context, as ever).
func RunFleet(a *App) error { return runFleet(a, false) }

// runFleet shows the fleet view; fromDashboard says the current
// context's dashboard opened it, and esc goes back there.
func runFleet(a *App, fromDashboard bool) error {
	if !IsTerminal(os.Stdout) || !IsTerminal(os.Stdin) {
		return app.Usage(errors.New("the fleet view needs a terminal; for scripts use `warren status --all-contexts --json` or `--check`"))
	}
	fl, err := app.NewFleet(a.fleetSettings())
	if err != nil {
		return err
	}
	c, err := a.Factory().Config()
	if err != nil {
		return err
	}
	a.Factory().TerminalTaken()
	// The cursor starts on the context warren was on: the config's
	// current one, or the dashboard's that led here.
	refresh, current, back := c.Refresh.Duration, c.Name, ""
	if fromDashboard {
		back = c.Name
	}
	for {
		// The same reader each time: what it read before is what the
		// growth is measured against.
		m := fleet.New(fleet.Options{Reader: fl, Refresh: refresh, Timeout: app.DefaultFleetTimeout, Styles: styles.Default(), Current: current, Back: back})
		final, err := tea.NewProgram(m, tea.WithAltScreen(), terminalInput()).Run()
		if err != nil {
			return fmt.Errorf("fleet view: %w", err)
		}
		open := final.(*fleet.Model).Open()
		if open == "" {
			return nil
		}
		a.ContextName, a.f = open, nil
		toFleet, err := a.dashboard()
		if err != nil || !toFleet {
			return err
		}
		current, back = a.ContextName, a.ContextName
	}
}
