package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
)

// NewRoot is warren's command tree: the global flags bound to a, the
// dashboard as the root command's action, and every subcommand.
func NewRoot(a *App, runTUI func(*App) error) *cobra.Command {
	root := &cobra.Command{
		Use:   "warren",
		Short: "Live RabbitMQ queues and dead letters for on-call operators",
		Long: "warren joins the RabbitMQ management API, the consumers' inbox table and the\n" +
			"contents of dead-letter queues into live views, and replays or quarantines dead\n" +
			"letters behind a confirmation prompt, with an audit log that can be verified.",
		Args:          usageArgs(cobra.NoArgs),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error {
			if a.AllContexts {
				return RunFleet(a)
			}
			return runTUI(a)
		},
	}
	root.Flags().BoolVar(&a.AllContexts, "all-contexts", false, "start on the fleet view: every context of the config on one screen")
	f := root.PersistentFlags()
	f.StringVar(&a.ConfigPath, "config", "", "config file (default: ./warren.toml once trusted by warren config trust, "+
		"then $XDG_CONFIG_HOME/warren/config.toml; with neither, the local broker as guest)")
	f.StringVar(&a.ContextName, "context", "", "context to use (default: current_context)")
	f.BoolVar(&a.ReadOnly, "read-only", false, "refuse every change: no replay, no quarantine")
	f.StringVar(&a.Operator, "operator", "", "operator name for the audit log (default: config, then $USER)")
	f.StringVar(&a.Debug, "debug", "", "log every UI message to this file (secrets and bodies redacted)")
	f.StringVar(&a.Target.AMQPURL, "amqp-url", "", "one-off target: the broker's AMQP URL, overriding the context "+
		"(without a config file: "+config.LocalAMQPURL+"); given alone, the management API is taken on the same host's port 15672 (15671 for amqps)")
	f.StringVar(&a.Target.ManagementURL, "management-url", "", "one-off target: the management API's URL, overriding the context "+
		"(without a config file: "+config.LocalManagementURL+"); given alone, AMQP is taken on the same host's port 5672 (5671 for https)")
	f.StringVar(&a.Target.Username, "username", "", "one-off target: the broker user, overriding the context "+
		"(without a config file: guest; the password only ever comes from $"+config.LocalPasswordEnv+" or the config's password source)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return app.Usage(err) })
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return noEmptyFlags(cmd) }
	root.AddCommand(
		newStatusCmd(a),
		newChannelsCmd(a),
		newLintCmd(a),
		newDlqCmd(a),
		newAuditCmd(a),
		newDemoCmd(a, runTUI),
		newConfigCmd(a),
		newFleetCmd(a),
	)
	return root
}

// usageArgs marks an argument error as bad usage (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return app.Usage(err)
		}
		return nil
	}
}

// mustName are the flags whose empty value would not mean "none" but
// act as if the flag were left out, often on more than was meant: a
// script's `--to "$DEST"` with DEST unset would replay into the queue
// that failed, and `--filter "$F"` every message.
var mustName = []string{"to", "exchange", "filter", "group", "output", "operation", "vhost", "context", "config",
	"amqp-url", "management-url", "username", "operator", "reason", "rate"}

// noEmptyFlags refuses one of mustName given an empty value.
func noEmptyFlags(cmd *cobra.Command) error {
	for _, name := range mustName {
		f := cmd.Flags().Lookup(name)
		if f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
			if name == "reason" {
				// Required where it is taken: leaving it out is no way.
				return app.Usage(errors.New("--reason is empty: say why these messages are quarantined"))
			}
			return app.Usage(fmt.Errorf("--%s is empty: give it a value, or leave it out (an empty value is not taken as none)", name))
		}
	}
	return nil
}
