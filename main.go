// Command warren is a terminal dashboard and CLI for RabbitMQ on-call
// operators: live queue and dead-letter views joined with the consumers'
// inbox, and audited replay and quarantine of dead letters.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/ui"
	"github.com/warrenops/warren/ui/cli"
	"github.com/warrenops/warren/ui/live"
	"github.com/warrenops/warren/ui/styles"
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

// runTUI wires the dashboard to the context's broker, databases and audit
// store, and runs it until the operator quits.
func runTUI(app *cli.App) error {
	c, err := app.Config()
	if err != nil {
		return err
	}
	if !cli.IsTerminal(os.Stdout) || !cli.IsTerminal(os.Stdin) {
		return cli.Usage(errors.New("the dashboard needs a terminal; for scripts use `warren status`, `warren dlq ls` and --json"))
	}
	m, err := app.Mgmt()
	if err != nil {
		return err
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
	lv, err := live.New(live.Services{
		Context:   c,
		Operator:  app.OperatorName(),
		Mgmt:      m,
		Dial:      app.DialAMQP,
		OpenAudit: app.AuditStore,
		OpenInbox: func(ctx context.Context, vhost, queue string) (live.InboxClient, error) {
			in, err := app.Inbox(ctx, vhost, queue)
			if err != nil || in == nil {
				return nil, err
			}
			return inboxClient{in}, nil
		},
	})
	if err != nil {
		return err
	}
	defer lv.Close()
	st := styles.Default()
	screens := lv.Screens(st)
	model := ui.New(ui.Options{
		Context:     c.Name,
		Environment: c.Environment,
		ReadOnly:    c.ReadOnly,
		InsecureTLS: c.TLS.InsecureSkipVerify,
		Refresh:     c.Refresh.Duration,
		Vhost:       c.Vhost,
		Lister:      m,
		Describer:   m,
		NewDLQ:      screens.NewDLQ,
		NewMessage:  screens.NewMessage,
		NewAudit:    screens.NewAudit,
		Debug:       debug,
		Styles:      &st,
	})
	_, err = tea.NewProgram(model, tea.WithAltScreen()).Run()
	return err
}

// inboxClient gives the inbox pool the Close signature the adapter wants.
type inboxClient struct{ *inbox.Client }

func (c inboxClient) Close() error { c.Client.Close(); return nil }
