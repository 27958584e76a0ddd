// Command warren is a terminal dashboard and CLI for RabbitMQ on-call
// operators: live queue and dead-letter views joined with the consumers'
// inbox, and audited replay and quarantine of dead letters.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/ui/cli"
)

func main() {
	app := cli.NewApp()
	root := newRoot(app)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "warren:", err)
		os.Exit(cli.ExitCode(err))
	}
}

func newRoot(app *cli.App) *cobra.Command {
	root := &cobra.Command{
		Use:   "warren",
		Short: "Live RabbitMQ queues and dead letters for on-call operators",
		Long: "warren joins the RabbitMQ management API, the consumers' inbox table and the\n" +
			"contents of dead-letter queues into live views, and replays or quarantines dead\n" +
			"letters behind a confirmation prompt, with an audit log that can be verified.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTUI(app)
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&app.ConfigPath, "config", "", "config file (default: ./warren.toml, then $XDG_CONFIG_HOME/warren/config.toml)")
	f.StringVar(&app.ContextName, "context", "", "context to use (default: current_context)")
	f.BoolVar(&app.ReadOnly, "read-only", false, "refuse every change: no replay, no quarantine")
	f.StringVar(&app.Operator, "operator", "", "operator name for the audit log (default: config, then $USER)")
	f.StringVar(&app.Debug, "debug", "", "log every UI message to this file (secrets and bodies redacted)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usage(err) })
	root.AddCommand(cli.Commands(app, runTUI)...)
	return root
}
