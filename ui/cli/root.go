package cli

import "github.com/spf13/cobra"

// Commands returns warren's subcommands. runTUI starts the dashboard; the
// demo command calls it once the scene is seeded.
func Commands(a *App, runTUI func(*App) error) []*cobra.Command {
	return []*cobra.Command{
		newStatusCmd(a),
		newLintCmd(a),
		newDlqCmd(a),
		newAuditCmd(a),
		newDemoCmd(a, runTUI),
		newConfigCmd(a),
	}
}
