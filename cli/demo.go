package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/demo"
)

// Demo defaults: the local broker and database this machine's services
// script brings up.
const (
	demoPasswordEnv = "WARREN_PASSWORD"
	demoDSNEnv      = "WARREN_DEMO_DSN"
	demoDefaultDSN  = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

func newDemoCmd(a *App, runTUI func(*App) error) *cobra.Command {
	var (
		o        demo.Options
		seedOnly bool
		cfgOut   string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Seed a realistic scene on a local broker and open warren on it",
		Long: "Seeds vhost warren-demo on a local RabbitMQ: an orders flow with a retry queue and a DLQ\n" +
			"holding dead letters of every reason (rejected, expired, maxlen, delivery_limit), a slow\n" +
			"consumer, a confirm-mode publisher, a growing and a draining queue, and an inbox table in\n" +
			"PostgreSQL. Re-running is idempotent. Then it opens the dashboard on that scene.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.ReadOnly {
				// Seeding purges and refills the scene's queues.
				return app.Refused(errors.New("--read-only: demo refused, since seeding purges and refills the scene's queues; run it without --read-only (the dashboard it opens can still be read-only with warren --read-only --config FILE)"))
			}
			if o.Password == "" {
				o.Password = os.Getenv(demoPasswordEnv)
			}
			if o.Password == "" {
				o.Password = "guest"
			}
			if o.InboxDSN == "" {
				o.InboxDSN = os.Getenv(demoDSNEnv)
			}
			if o.InboxDSN == "" {
				o.InboxDSN = demoDefaultDSN
			}
			o.Log = a.Err
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			scene, err := demo.Seed(ctx, o)
			if err != nil {
				return err
			}
			if cfgOut == "" {
				cfgOut = filepath.Join(app.StateDir(), "demo.toml")
			}
			scene.Audit = "file:" + filepath.Join(filepath.Dir(cfgOut), "demo-audit.jsonl")
			if err := writeDemoConfig(cfgOut, scene.ConfigTOML()); err != nil {
				return err
			}
			fmt.Fprintf(a.Out, "demo: scene ready in vhost %s; config written to %s\n", scene.Vhost, cfgOut)
			if seedOnly {
				// The inbox is where this seed wrote it: a dashboard
				// opened on another database finds no table.
				fmt.Fprintf(a.Out, "demo: open it with  %s=%s %s=%s warren --config %s\n",
					demoPasswordEnv, "<password>", demoDSNEnv, shownDSN(o.InboxDSN), cfgOut)
				return nil
			}
			// The TUI reads secrets from the variables the scene's config
			// names; hand it the ones the demo used.
			os.Setenv(demoPasswordEnv, o.Password)
			os.Setenv(demoDSNEnv, o.InboxDSN)
			a.ConfigPath, a.f = cfgOut, nil
			a.ContextName = ""

			runCtx, cancel := context.WithCancel(ctx)
			quiet := o
			quiet.Log = nil // the TUI owns the terminal now
			done := make(chan error, 1)
			go func() { done <- demo.Run(runCtx, quiet, scene) }()
			tuiErr := runTUI(a)
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(a.Err, "demo: background activity stopped: %v\n", err)
			}
			return tuiErr
		},
	}
	f := cmd.Flags()
	f.BoolVar(&seedOnly, "seed-only", false, "seed the scene and exit, without the dashboard")
	f.StringVar(&o.AMQPURL, "amqp-url", "amqp://127.0.0.1:5672/", "broker to seed")
	f.StringVar(&o.ManagementURL, "management-url", "http://127.0.0.1:15672", "its management API")
	f.StringVar(&o.Username, "username", "guest", "broker user (password from $"+demoPasswordEnv+", default guest)")
	f.StringVar(&o.Vhost, "vhost", demo.DefaultVhost, "vhost to seed (created when missing)")
	f.StringVar(&o.InboxDSN, "inbox-dsn", "", "PostgreSQL DSN for the demo inbox (default $"+demoDSNEnv+", then the local test database)")
	f.StringVar(&cfgOut, "write-config", "", "where to write the scene's config (default $XDG_STATE_HOME/warren/demo.toml)")
	return cmd
}

func writeDemoConfig(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("demo config: %w", err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("demo config: %w", err)
	}
	return nil
}

// shownDSN is dsn as a command line may show it: a URL without its
// password, quoted for a shell; "<dsn>" for any other form, which may
// hold one anywhere.
func shownDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "<dsn>"
	}
	return "'" + strings.ReplaceAll(u.Redacted(), "'", `'\''`) + "'"
}
