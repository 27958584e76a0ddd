package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/sanitize"
)

// importFlags are dlq import's flags.
type importFlags struct {
	to, exchange, routingKey, vhost, rate string
	originalKey, startOver                bool
	dryRun, yes, asJSON                   bool
}

const importLong = `Publish the messages of a file dlq export wrote, exactly as they were
delivered — every property, every header in its AMQP type, the body — to a
queue (--to, through the default exchange) or an exchange (--exchange, with
--routing-key or each message's --original-routing-key), mandatory and with
publisher confirms, audited as the operation import with the file's sha256
and each logical ID (docs/ARCHITECTURE.md §4.14). The whole file is read and
checked first: a file that is not an export, a line that does not parse or a
body whose sha256 does not match refuses the import, naming the line, and
nothing is published. The first message the destination does not take (a
return, a nack) stops it, once what is already in flight has settled; the
prompt rules are replay's. An import stopped
before its whole file is confirmed (killed, ctrl+c, a stop) stays open: the
same command finishes it, and what was confirmed is not published again;
--start-over publishes the whole file instead (to another destination,
say, when the first one is gone), closing that import as cancelled. A file
imported to its end before is refused without --start-over: it would
publish every message again.`

func newDlqImportCmd(a *App) *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use: "import FILE (--to QUEUE | --exchange X (--routing-key K | --original-routing-key))", Long: importLong,
		Short: "Publish an export file's messages again, as they were, after a prompt",
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return app.Usage(fmt.Errorf("%s: %w", cmd.CommandPath(), err))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.runDlqImport(cmd.Context(), args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "publish to the queue QUEUE (through the default exchange)")
	fl.StringVar(&f.exchange, "exchange", "", "publish to the exchange X instead")
	fl.StringVar(&f.routingKey, "routing-key", "", "with --exchange: the routing key")
	fl.BoolVar(&f.originalKey, "original-routing-key", false, "with --exchange: each message's original routing key (from its x-death)")
	fl.BoolVar(&f.startOver, "start-over", false, "publish the whole file as a new import: after an interrupted import of it (closed as cancelled), or again after a finished one")
	fl.StringVar(&f.rate, "rate", "0", "at most N messages per second (0: unlimited), or auto: the destination's consumers' pace")
	fl.BoolVar(&f.dryRun, "dry-run", false, "check the file and print the plan; publish nothing")
	fl.BoolVar(&f.yes, "yes", false, "do not ask; required without a terminal")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fl.StringVar(&f.vhost, "vhost", "", "the vhost to publish into (default: the context's vhost, then /)")
	return cmd
}

// importTo is the destination the flags name.
func importTo(f importFlags) (*actions.Override, error) {
	switch {
	case f.to != "" && f.exchange != "":
		return nil, errors.New("--to and --exchange: name one destination")
	case f.to != "":
		if f.routingKey != "" || f.originalKey {
			return nil, errors.New("--routing-key and --original-routing-key go with --exchange; --to names the queue")
		}
		return &actions.Override{RoutingKey: f.to}, nil
	case f.exchange != "":
		if (f.routingKey != "") == f.originalKey {
			return nil, errors.New("--exchange needs --routing-key K or --original-routing-key (one of them)")
		}
		return &actions.Override{Exchange: f.exchange, RoutingKey: f.routingKey, KeepKey: f.originalKey}, nil
	}
	return nil, errors.New("name a destination: --to QUEUE, or --exchange X with --routing-key K or --original-routing-key")
}

func (a *App) runDlqImport(ctx context.Context, file string, f importFlags) error {
	to, err := importTo(f)
	if err != nil {
		return app.Usage(err)
	}
	var rate float64
	var staging ops.Staging
	if r := strings.TrimSpace(f.rate); r == "auto" {
		staging.RateAuto = true
	} else if rate, err = parseRate(r); err != nil {
		return app.Usage(err)
	}
	c, err := a.Factory().Config()
	if err != nil {
		return err
	}
	if !f.dryRun && !f.yes && !a.isTerminal(a.In) {
		return app.Refused(errors.New("no terminal to confirm on: pass --yes to import, or --dry-run to see the plan"))
	}
	o, err := a.Factory().Ops()
	if err != nil {
		return err
	}
	defer o.Close()
	if IsTerminal(a.Err) {
		fmt.Fprintf(a.Err, "checking %s before anything is published…\n", sanitize.Text(file))
	}
	defer bulkMemory()() // the check reads the whole file, the run walks it
	plan, err := o.Plan(ctx, ops.Scope{Action: ops.Import, Queue: domain.QueueRef{Vhost: vhostOf(c, f.vhost), Name: file}, File: file, StartOver: f.startOver,
		To: to, Rate: rate, Staging: staging, DryRun: f.dryRun, Unasked: f.yes && !f.dryRun})
	if err != nil {
		return exitFor(err)
	}
	defer plan.Close()
	return a.runPlan(ctx, o, plan, actionFlags{action: string(ops.Import), dryRun: f.dryRun, yes: f.yes, asJSON: f.asJSON})
}
