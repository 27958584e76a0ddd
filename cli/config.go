package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newConfigCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Write, inspect and check warren's configuration"}
	cmd.AddCommand(newConfigInitCmd(a), newConfigTrustCmd(a), &cobra.Command{
		Use:   "check",
		Short: "Validate the config and try each connection (AMQP, management API, inboxes, audit store)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.configCheck(cmd.Context())
		},
	})
	return cmd
}

// check is one line of `config check`.
type check struct {
	name string
	run  func(ctx context.Context) (string, error)
}

func (a *App) configCheck(ctx context.Context) error {
	c, err := a.Factory().Config()
	if err != nil {
		fmt.Fprintf(a.Out, "%-22s FAIL  %v\n", "config", err)
		return err
	}
	fmt.Fprintf(a.Out, "%-22s ok    %s\n", "config", sanitize.Text(a.describeConfig(c)))
	fmt.Fprintf(a.Out, "%-22s ok    %s\n", "conventions", sanitize.Text(conventionsText(c)))
	if w := app.PlaintextWarning(c); w != "" {
		// A warning, not a failure: a broker inside a private network
		// may be meant to be reached so.
		fmt.Fprintf(a.Out, "%-22s warn  %s\n", "transport", sanitize.Text(w))
	}
	checks := []check{
		{"amqp", func(context.Context) (string, error) {
			conn, err := a.Factory().DialAMQP(c.Vhost)
			if err != nil {
				return "", err
			}
			defer conn.Close()
			vhost := c.Vhost
			if vhost == "" {
				vhost = "the URL's vhost"
			}
			return fmt.Sprintf("%s as %s, vhost %s", app.RedactURL(c.AMQPURL), c.Username, vhost), nil
		}},
		{"management api", func(ctx context.Context) (string, error) {
			_, m, err := a.Factory().Management()
			if err != nil {
				return "", err
			}
			ov, err := m.Overview(ctx)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s, RabbitMQ %s", app.RedactURL(c.ManagementURL), ov.RabbitMQVersion), nil
		}},
	}
	for _, q := range c.Queues {
		if q.Inbox == nil {
			continue
		}
		q := q
		checks = append(checks, check{"inbox " + q.Name, func(ctx context.Context) (string, error) {
			in, err := a.Factory().Inbox(ctx, q.Vhost, q.Name)
			if err != nil {
				return "", err
			}
			defer in.Close()
			if _, err := in.Lookup(ctx, []string{"warren-config-check"}); err != nil {
				return "", err
			}
			return fmt.Sprintf("table %s, read-only", q.Inbox.Table), nil
		}})
	}
	checks = append(checks, check{"audit store", func(ctx context.Context) (string, error) {
		st, err := a.Factory().AuditStore()
		if err != nil {
			return "", err
		}
		defer st.Close()
		if err := st.Check(ctx); err != nil {
			return "", err
		}
		return st.Describe() + ", writable", nil
	}})
	var failed []string
	for _, ch := range checks {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		msg, err := ch.run(cctx)
		cancel()
		if err != nil {
			failed = append(failed, sanitize.Text(ch.name))
			fmt.Fprintf(a.Out, "%-22s FAIL  %s\n", sanitize.Text(ch.name), sanitize.Text(err.Error()))
			continue
		}
		fmt.Fprintf(a.Out, "%-22s ok    %s\n", sanitize.Text(ch.name), sanitize.Text(msg))
	}
	a.auditGrantsCheck(ctx)
	a.metricsCheck(ctx)
	if len(failed) > 0 {
		// Named, not counted: the rows above hold warnings and notes
		// that are no checks of their own.
		return &app.ExitError{Code: app.ExitFailure, Err: fmt.Errorf("%s failed: %s", format.Plural(len(failed), "check"), strings.Join(failed, ", "))}
	}
	return nil
}

// metricsCheck says whether the overview's first screen can come from the
// broker's Prometheus endpoint. It is optional: its line never fails the
// check.
func (a *App) metricsCheck(ctx context.Context) {
	_, m, err := a.Factory().Management()
	if err != nil {
		return
	}
	mm, ok := m.(interface {
		Metrics(context.Context) mgmt.MetricsReport
	})
	if !ok {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r := mm.Metrics(cctx)
	var state, msg string
	switch {
	case r.URL == "":
		state, msg = "-", "not read (metrics_url is \"off\", or unset beside a management API off port 15672): the first screen of a large broker comes from the management API"
	case r.Err != nil:
		state, msg = "-", "not read: "+r.Err.Error()+"; the first screen of a large broker comes from the management API"
	default:
		state, msg = "ok", fmt.Sprintf("%s, node %s, %s: the first screen of a broker of up to %d queues comes from it", r.URL, r.Node, format.Plural(r.Queues, "queue"), mgmt.MetricsMaxQueues)
	}
	fmt.Fprintf(a.Out, "%-22s %-5s %s\n", "metrics (optional)", state, sanitize.Text(msg))
}

// describeConfig says where the target came from: the file and context,
// or that there is no file and the local broker (or a one-off target)
// stands in.
func (a *App) describeConfig(c *config.Context) string {
	var text string
	if f := a.Factory().ConfigFile(); f != nil {
		text = fmt.Sprintf("%s (context %s)", f.Path, c.Name)
	} else {
		text = fmt.Sprintf("no config: %s as %s (looked at %s; `warren config init` writes one)",
			c.Where(), c.Username, strings.Join(config.Candidates(), ", "))
	}
	if a.Target.IsSet() {
		text += "; target overridden by --amqp-url, --management-url or --username"
	}
	return text
}

// conventionsText lists the conventions in force, in the order they are
// tried (docs/ARCHITECTURE.md §4.12).
func conventionsText(c *config.Context) string {
	parts := []string{"broker x-death"}
	for _, cv := range c.Conventions {
		where := "every queue"
		if len(cv.Queues) > 0 {
			where = strings.Join(cv.Queues, ", ")
		}
		fields := cv.Fields()
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k+"="+fields[k])
		}
		sort.Strings(keys)
		parts = append(parts, fmt.Sprintf("%s (yours, on %s: %s)", cv.Name, where, strings.Join(keys, " ")))
	}
	for _, b := range dlq.Builtin() {
		parts = append(parts, b.Name)
	}
	return strings.Join(parts, "; ")
}
