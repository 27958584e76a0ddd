package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// actionFlags are the flags of dlq replay and dlq quarantine.
type actionFlags struct {
	action         string
	filter, to     string
	group          string
	reason, vhost  string
	rate           string // N, or auto
	limit          int
	canary         int
	canaryWait     time.Duration
	haltAt         float64 // percent
	includeApplied bool
	dryRun, yes    bool
	asJSON         bool
	allowRisk      bool
}

func newDlqReplayCmd(a *App) *cobra.Command {
	cmd, f := newDlqActionCmd(a, actions.ActionReplay, "Republish dead letters to the queue they died in (or --to), after a prompt", replayLong)
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "publish to EXCHANGE[/ROUTING_KEY] instead (no key: each message's original one)")
	fl.StringVar(&f.rate, "rate", "0", "at most N messages per second (0: unlimited), or auto: the destination's consumers' pace")
	fl.BoolVar(&f.includeApplied, "include-applied", false, "replay messages the inbox reports applied too")
	fl.IntVar(&f.canary, "canary", 0, "publish N first and wait for their verdict, then stages ten times larger, each judged (0: no canary)")
	fl.DurationVar(&f.canaryWait, "canary-wait", actions.DefaultCanaryWait, "how long a stage's verdict is awaited (0: do not wait)")
	fl.Float64Var(&f.haltAt, "halt-at", actions.DefaultHaltAt*100, "halt when more than this percent of a stage's copies die again")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		// They judge a canary's stages: without one they would be taken
		// and do nothing.
		for _, name := range []string{"canary-wait", "halt-at"} {
			if cmd.Flags().Changed(name) && f.canary <= 0 {
				return app.Usage(fmt.Errorf("--%s judges the stages of a canary: pass --canary N with it, or drop it", name))
			}
		}
		return nil
	}
	return cmd
}

const replayLong = `Republish the dead letters of QUEUE to the queue each one died in, through the
default exchange, so only the consumer that failed sees it again. Messages the
inbox reports applied are skipped unless --include-applied; quarantined ones are
left out unless QUEUE is their parking queue (a release). A source message is
removed only once its copy was confirmed and routed; every other stays.`

func newDlqQuarantineCmd(a *App) *cobra.Command {
	cmd, f := newDlqActionCmd(a, actions.ActionQuarantine, "Move dead letters to the DLQ's parking queue with a reason, after a prompt", quarantineLong)
	cmd.Flags().StringVar(&f.reason, "reason", "", "why these messages are quarantined (required)")
	return cmd
}

const quarantineLong = `Move dead letters of QUEUE to its parking queue (config quarantine, default
QUEUE.quarantine, declared durable if missing) with headers naming the reason,
who and when. Quarantined messages stay out of bulk replays; replaying from the
parking queue releases them.`

// newDlqActionCmd is what replay and quarantine share: one QUEUE, the
// flags of every action, and the run.
func newDlqActionCmd(a *App, action, short, long string) (*cobra.Command, *actionFlags) {
	f := &actionFlags{action: action}
	cmd := &cobra.Command{
		Use: action + " QUEUE", Short: short, Long: long,
		Args: oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runDlqAction(cmd.Context(), args[0], *f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.filter, "filter", "", `only messages matching EXPR, e.g. 'reason == "rejected" && attempts >= 3'`)
	fl.StringVar(&f.group, "group", "", "only the failure group ID (as dlq groups lists it)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing")
	fl.BoolVar(&f.yes, "yes", false, "do not ask; required without a terminal")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fl.StringVar(&f.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.IntVar(&f.limit, "limit", 0, "act on at most the first N messages (0: every message the queue holds when it starts; a stream: 10000)")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "act on a quorum DLQ whose delivery limit a browse counts against (see the refusal)")
	return cmd, f
}

// oneQueue makes a missing or extra QUEUE argument bad usage (exit 2).
func oneQueue(cmd *cobra.Command, args []string) error {
	if err := cobra.ExactArgs(1)(cmd, args); err != nil {
		return app.Usage(fmt.Errorf("%s: %w", cmd.CommandPath(), err))
	}
	return nil
}

// actionRequest is a validated command line.
type actionRequest struct {
	vhost   string
	filter  actions.Matcher // nil without --filter
	to      *actions.Override
	rate    float64
	staging ops.Staging
}

func (a *App) runDlqAction(ctx context.Context, queue string, f actionFlags) error {
	c, err := a.Factory().Config()
	if err != nil {
		return err
	}
	if !f.dryRun && !f.yes && !a.isTerminal(a.In) {
		return app.Refused(fmt.Errorf("no terminal to confirm on: pass --yes to %s, or --dry-run to see the plan", f.action))
	}
	req, err := parseAction(c, f)
	if err != nil {
		return app.Usage(err)
	}
	o, err := a.Factory().Ops()
	if err != nil {
		return err
	}
	defer o.Close()
	scope := ops.Scope{
		Action: ops.Action(f.action), Queue: domain.QueueRef{Vhost: req.vhost, Name: queue},
		Limit: f.limit, Unasked: f.yes && !f.dryRun, DryRun: f.dryRun, AllowRisk: f.allowRisk,
		Filter: req.filter, FilterText: f.filter, To: req.to, IncludeApplied: f.includeApplied, Rate: req.rate, Reason: f.reason,
		Staging: req.staging,
	}
	if IsTerminal(a.Err) && !scope.Unasked {
		fmt.Fprintf(a.Err, "reading %s to plan the %s…\n", sanitize.Text(queue), f.action)
	}
	defer bulkMemory()() // the plan reads the whole queue, the run walks it
	plan, err := o.Plan(ctx, scope)
	if err != nil {
		return exitFor(err)
	}
	defer plan.Close()
	return a.runPlan(ctx, o, plan, f)
}

// runPlan prints the plan, asks, runs it with progress on stderr and
// reports: what every operation of the command line shares.
func (a *App) runPlan(ctx context.Context, o *ops.Ops, plan *ops.Plan, f actionFlags) error {
	printNotes(a.Err, plan.Warnings)
	if plan.Decided {
		if f.dryRun || plan.Idle() {
			return a.printPlan(plan, f)
		}
		if err := a.confirm(ctx, plan, f); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := o.Run(ctx, plan, a.progressPrinter(string(plan.Action)))
	return a.report(plan, res, err, f)
}

// exitFor is the one mapping of what an operation refuses before
// anything moves to an exit code: a guard's refusal (3) — the delivery
// limit, a read-only context, an audit store that cannot be written, a
// destination that does not exist — or bad usage (2). Other errors pass.
func exitFor(err error) error {
	var (
		refused *domain.RefusedError
		bad     *actions.RequestError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, actions.ErrHalted):
		return &app.ExitError{Code: app.ExitHalted, Err: err}
	case errors.As(err, &refused), errors.Is(err, ops.ErrReadOnly), errors.Is(err, ops.ErrNotEditable),
		errors.Is(err, actions.ErrAuditUnavailable), errors.Is(err, actions.ErrNoDestination),
		errors.Is(err, actions.ErrCannotJudge), errors.Is(err, ops.ErrNoPace):
		return app.Refused(err)
	case errors.As(err, &bad):
		return app.Usage(err)
	}
	return err
}

// confirm asks the operator, unless --yes: "y", or the phrase the plan
// asks to be typed.
func (a *App) confirm(ctx context.Context, plan *ops.Plan, f actionFlags) error {
	if f.yes {
		return nil
	}
	for _, l := range plan.Staging.Lines() {
		fmt.Fprintln(a.Err, l)
	}
	if w := plan.Confirm.Warning(); w != "" {
		fmt.Fprintln(a.Err, w)
	}
	ok, err := confirmAction(ctx, a.In, a.Err, sanitize.Text(plan.Summary), plan.Confirm.Phrase)
	if err != nil {
		return err
	}
	if !ok {
		return app.Refused(errors.New("not confirmed; nothing was changed"))
	}
	return nil
}

func parseAction(c *config.Context, f actionFlags) (*actionRequest, error) {
	r := &actionRequest{vhost: vhostOf(c, f.vhost),
		staging: ops.Staging{Canary: f.canary, CanaryWait: f.canaryWait, HaltAt: f.haltAt / 100}}
	switch rate := strings.TrimSpace(f.rate); rate {
	case "auto":
		r.staging.RateAuto = true
	case "": // quarantine has no --rate
	default:
		n, err := parseRate(f.rate)
		if err != nil {
			return nil, err
		}
		r.rate = n
	}
	if err := r.staging.Validate(); err != nil {
		return nil, err
	}
	switch {
	case f.limit < 0:
		return nil, fmt.Errorf("--limit %d: want 0 (no limit) or more", f.limit)
	case f.action == actions.ActionQuarantine && strings.TrimSpace(f.reason) == "":
		return nil, errors.New("--reason is required: say why these messages are quarantined")
	}
	if f.group != "" {
		src, err := domain.GroupFilter(f.filter, f.group)
		if err != nil {
			return nil, err
		}
		f.filter = src
	}
	if f.filter != "" {
		flt, err := domain.CompileFilter(f.filter)
		if err != nil {
			return nil, err
		}
		r.filter = flt
	}
	if f.to != "" {
		o, err := actions.ParseOverride(f.to)
		if err != nil {
			return nil, err
		}
		r.to = &o
	}
	return r, nil
}

// confirmAction asks question on w and reads the answer from r: "y" or,
// when phrase is set, the phrase typed exactly. ctx ending (ctrl+c) is a
// no: the read is left behind, and the command goes on to return what it
// holds.
func confirmAction(ctx context.Context, r io.Reader, w io.Writer, question, phrase string) (bool, error) {
	if phrase == "" {
		fmt.Fprintf(w, "%s [y/N] ", question)
	} else {
		// The phrase is sanitised text, shown as it is to be typed: %q
		// would escape its backslashes again.
		fmt.Fprintf(w, "%s\nType \"%s\" to confirm: ", question, phrase)
	}
	type answer struct {
		line string
		err  error
	}
	read := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		read <- answer{line, err}
	}()
	var line string
	select {
	case <-ctx.Done():
		fmt.Fprintln(w)
		return false, nil
	case a := <-read:
		if a.err != nil && !errors.Is(a.err, io.EOF) {
			return false, a.err
		}
		line = a.line
	}
	line = strings.TrimSpace(line)
	if phrase != "" {
		return line == phrase, nil
	}
	return strings.EqualFold(line, "y") || strings.EqualFold(line, "yes"), nil
}

// printPlan prints a plan that will not run: a dry run, or nothing to
// move.
func (a *App) printPlan(plan *ops.Plan, f actionFlags) error {
	if f.asJSON {
		return writeJSON(a.Out, planJSON(plan, f.dryRun))
	}
	if f.dryRun {
		fmt.Fprint(a.Out, "dry run: ")
	}
	fmt.Fprintln(a.Out, sanitize.Text(plan.Summary))
	for _, l := range plan.Lines {
		fmt.Fprintln(a.Out, "  "+sanitize.Text(l))
	}
	for _, l := range plan.Staging.Lines() {
		fmt.Fprintln(a.Out, "  "+l)
	}
	if !f.dryRun {
		fmt.Fprintln(a.Out, "nothing to do: no message to move, and nothing was changed")
	}
	return nil
}

// report prints what an operation did, and exits non-zero when it
// failed or left messages in the DLQ.
func (a *App) report(plan *ops.Plan, res ops.Result, err error, f actionFlags) error {
	if res.Operation != "" {
		if f.asJSON {
			if jerr := writeJSON(a.Out, withError(resultJSON(plan, res), err)); jerr != nil && err == nil {
				err = jerr
			}
		} else {
			fmt.Fprintln(a.Out, format.Outcome(string(plan.Action), sanitize.Text(plan.Queue.Name), res.Counts))
			printAuditHead(a.Out, res.AuditHead)
		}
		printNotes(a.Err, res.Notes)
		if res.Halted {
			fmt.Fprintf(a.Err, "nothing was rolled back: the rest stays in %s; fix the consumer, then `warren dlq resume %s` (a fresh canary goes first)\n",
				sanitize.Text(plan.Queue.Name), sanitize.Text(plan.Queue.Name))
		}
	}
	if res.Incomplete {
		// An import that did not publish its whole file: its operation
		// stays open, and the same command finishes it.
		open := fmt.Errorf("import %s is left open: %d of the file's %s confirmed; run the same `warren dlq import` again to finish it (what was confirmed is not published again)",
			res.Operation, res.Confirmed, format.Messages(plan.Selected))
		if err != nil {
			open = fmt.Errorf("%w; %w", err, open)
		}
		return exitFor(open)
	}
	if err != nil {
		return exitFor(err)
	}
	if left := res.Left(); left > 0 {
		return &app.ExitError{Code: app.ExitFailure, Err: fmt.Errorf("%d of %s not moved: they stay in %s (operation %s; see `warren audit tail`)",
			left, format.Messages(res.Selected+res.NotSent), sanitize.Text(plan.Queue.Name), res.Operation)}
	}
	return nil
}

// printAuditHead ends an operation's output with the audit log's head
// after the operation's last record (its final record, or the signed
// checkpoint after it): the anchor the operator keeps in the ticket,
// which `warren audit verify --expect-head` checks later.
func printAuditHead(w io.Writer, h *domain.AuditHead) {
	if h != nil {
		fmt.Fprintln(w, "audit head: "+h.String())
	}
}

// withError is v, the result of a run that ended on err, with the error
// as its "error" field: a script reading the JSON of a refused or failed
// run must not take it for a run that chose nothing. v as it is without
// an error.
func withError(v any, err error) any {
	if err == nil {
		return v
	}
	b, jerr := json.Marshal(v)
	if jerr != nil {
		return v
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return v
	}
	msg, _ := json.Marshal(err.Error())
	m["error"] = msg
	return m
}

// parseRate reads --rate N: a finite number of messages per second, 0
// for unlimited.
func parseRate(s string) (float64, error) {
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("--rate %q: want a number of messages per second (0: unlimited), or auto", s)
	}
	return n, nil
}
