package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/sanitize"
)

// defaultStreamLimit is how many messages of a stream one command acts
// on: a stream is acted on one held page at a time. Other queues have no
// default cap.
const defaultStreamLimit = 10000

// maxActionLimit is the most deliveries one channel can hold: the largest
// prefetch AMQP can express.
const maxActionLimit = 65535

// actionBrowseWindow is the browse page for actions: a page of this size
// keeps the prefetch well above the confirm window as pages accumulate.
const actionBrowseWindow = 4096

// actionFlags are the flags of dlq replay and dlq quarantine.
type actionFlags struct {
	action         string
	filter, to     string
	group          string
	reason, vhost  string
	rate           float64
	limit          int
	includeApplied bool
	dryRun, yes    bool
	asJSON         bool
	allowRisk      bool
}

func newDlqReplayCmd(a *App) *cobra.Command {
	cmd, f := newDlqActionCmd(a, actions.ActionReplay, "Republish dead letters to the queue they died in (or --to), after a prompt", replayLong)
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "publish to EXCHANGE[/ROUTING_KEY] instead (no key: each message's original one)")
	fl.Float64Var(&f.rate, "rate", 0, "at most N messages per second (0: unlimited)")
	fl.BoolVar(&f.includeApplied, "include-applied", false, "replay messages the inbox reports applied too")
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
		return Usage(fmt.Errorf("%s: %w", cmd.CommandPath(), err))
	}
	return nil
}

// actionRequest is a validated command line.
type actionRequest struct {
	vhost  string
	filter actions.Matcher // nil without --filter
	to     *actions.Override
}

func (a *App) runDlqAction(ctx context.Context, queue string, f actionFlags) error {
	c, err := a.Config()
	if err != nil {
		return err
	}
	if c.ReadOnly && !f.dryRun {
		return Refused(fmt.Errorf("context %q is read-only: %s refused (--dry-run shows the plan)", c.Name, f.action))
	}
	if !f.dryRun && !f.yes && !IsTerminal(a.In) {
		return Refused(fmt.Errorf("no terminal to confirm on: pass --yes to %s, or --dry-run to see the plan", f.action))
	}
	req, err := parseAction(c, queue, f)
	if err != nil {
		return Usage(err)
	}
	o, t, err := a.dlqTarget(ctx, queue, readFlags{vhost: req.vhost, allowRisk: f.allowRisk})
	if err != nil {
		return err
	}
	defer o.Close()
	if !f.dryRun {
		if err := o.CheckAudit(ctx); err != nil {
			if errors.Is(err, actions.ErrAuditUnavailable) {
				return Refused(err)
			}
			return err
		}
	}
	if f.action == actions.ActionQuarantine && t.Knows.Release {
		return Usage(fmt.Errorf("%s is a parking queue already; replay from it to release its messages", sanitize.Text(queue)))
	}
	preq := ops.PlanRequest{
		Action: ops.Action(f.action), Queue: t.Ref, Reason: f.reason,
		Filter: req.filter, FilterText: f.filter, To: req.to, IncludeApplied: f.includeApplied, Rate: f.rate,
	}
	if t.Info.Type == domain.TypeStream {
		return a.runHeldAction(ctx, o, t, preq, f)
	}
	return a.runStreamedAction(ctx, o, t, preq, f)
}

// runHeldAction acts on a stream: nothing can be removed from it, so a
// page of at most --limit messages is held, planned and acted on, and
// the offsets are recorded.
func (a *App) runHeldAction(ctx context.Context, o *ops.Ops, t *ops.Target, preq ops.PlanRequest, f actionFlags) error {
	limit := f.limit
	if limit == 0 {
		limit = defaultStreamLimit
	}
	if limit > maxActionLimit {
		return Usage(fmt.Errorf("--limit %d: a stream is acted on one page at a time, at most %d", limit, maxActionLimit))
	}
	t.Opts.Window = min(actionBrowseWindow, limit)
	sess, closeBrowse, err := a.browse(ctx, o, t)
	if err != nil {
		return err
	}
	defer closeBrowse()
	letters, notes, err := holdLetters(ctx, sess, limit)
	if err != nil {
		return err
	}
	preq.Session, preq.Letters = sess, letters
	plan, err := o.Plan(ctx, preq)
	if err != nil {
		return Usage(err)
	}
	printNotes(a.Err, append(notes, plan.Warnings...))
	if f.dryRun || plan.Publish == 0 {
		return a.printPlan(plan.Summary, plan.Lines, plan.Publish, plan.SkippedApplied, f)
	}
	if err := a.confirm(ctx, t.Ref.Name, plan.Summary, plan.Publish, f); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := o.Execute(ctx, plan, a.progressPrinter(string(plan.Action)))
	return a.report(plan.Action, t.Ref.Name, res, err, f)
}

// confirm asks the operator, unless --yes: "y", or in a prod context or
// above the confirm threshold the queue's name and the count typed.
func (a *App) confirm(ctx context.Context, queue, summary string, n int, f actionFlags) error {
	if f.yes {
		return nil
	}
	c, err := a.Config()
	if err != nil {
		return err
	}
	threshold := c.ConfirmThreshold
	if threshold <= 0 {
		threshold = config.DefaultConfirmThreshold
	}
	phrase := ""
	if c.IsProd() || n > threshold {
		phrase = fmt.Sprintf("%s %d", queue, n)
	}
	ok, err := confirmAction(ctx, a.In, a.Err, sanitize.Text(summary), sanitize.Text(phrase))
	if err != nil {
		return err
	}
	if !ok {
		return Refused(errors.New("not confirmed; nothing was changed"))
	}
	return nil
}

func parseAction(c *config.Context, queue string, f actionFlags) (*actionRequest, error) {
	r := &actionRequest{vhost: vhostOf(c, f.vhost)}
	switch {
	case f.rate < 0:
		return nil, fmt.Errorf("--rate %g: want 0 (unlimited) or more", f.rate)
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
	if f.action == actions.ActionQuarantine && c.Knowledge(r.vhost, queue, nil).Release {
		return nil, fmt.Errorf("%s is a parking queue already; replay from it to release its messages", queue)
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

// holdLetters pages through the session until the queue ends or limit
// letters are held; the letters past limit stay held until Close returns
// them.
func holdLetters(ctx context.Context, sess *ops.Browse, limit int) ([]domain.DeadLetter, []string, error) {
	var notes []string
	refused := 0
	for {
		page, err := sess.Next(ctx)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, page.Notes...)
		refused += len(page.Refused)
		if page.End || page.Seen-refused >= limit {
			break
		}
	}
	letters := sess.Letters()
	if len(letters) > limit {
		letters = letters[:limit]
		notes = append(notes, fmt.Sprintf("--limit %d reached: more messages stay in the queue for another run", limit))
	}
	if refused > 0 {
		notes = append(notes, fmt.Sprintf("%d messages refused by the delivery-limit guard stay untouched", refused))
	}
	return letters, notes, nil
}

// confirmAction asks question on w and reads the answer from r: "y" or,
// when phrase is set, the phrase typed exactly. ctx ending (ctrl+c) is a
// no: the read is left behind, and the command goes on to return what it
// holds.
func confirmAction(ctx context.Context, r io.Reader, w io.Writer, question, phrase string) (bool, error) {
	if phrase == "" {
		fmt.Fprintf(w, "%s [y/N] ", question)
	} else {
		fmt.Fprintf(w, "%s\nType %q to confirm: ", question, phrase)
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

func (a *App) printPlan(summary string, lines []string, moving, skippedApplied int, f actionFlags) error {
	if f.asJSON {
		return writeJSON(a.Out, ops.Counts{Selected: moving, SkippedApplied: skippedApplied})
	}
	if f.dryRun {
		fmt.Fprint(a.Out, "dry run: ")
	}
	fmt.Fprintln(a.Out, sanitize.Text(summary))
	for _, l := range lines {
		fmt.Fprintln(a.Out, "  "+sanitize.Text(l))
	}
	return nil
}

// report prints how an operation ended and maps it to the exit code:
// messages that were to move and did not make it exit 1.
func (a *App) report(action ops.Action, queue string, res ops.Result, err error, f actionFlags) error {
	if errors.Is(err, actions.ErrAuditUnavailable) {
		return Refused(err)
	}
	if res.Operation != "" {
		if f.asJSON {
			if jerr := writeJSON(a.Out, res); jerr != nil && err == nil {
				err = jerr
			}
		} else {
			fmt.Fprintln(a.Out, resultLine(action, queue, res))
			printAuditHead(a.Out, res.AuditHead)
		}
		printNotes(a.Err, res.Notes)
	}
	if err != nil {
		return err
	}
	if left := res.Left(); left > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d messages were not moved and stay in %s (operation %s; see `warren audit tail`)",
			left, res.Selected+res.NotSent, sanitize.Text(queue), res.Operation)}
	}
	return nil
}

// printAuditHead ends an operation's output with the audit log's head
// after the operation's last record (its final record, or the signed
// checkpoint after it): the anchor the operator keeps in the ticket,
// which `warren audit verify --expect-head` checks later.
func printAuditHead(w io.Writer, h *audit.Head) {
	if h != nil {
		fmt.Fprintln(w, "audit head: "+h.String())
	}
}

func resultLine(action ops.Action, queue string, res ops.Result) string {
	s := fmt.Sprintf("%s %s: %d selected, %d skipped as applied, %d confirmed, %d returned, %d nacked, %d unknown",
		action, res.Operation, res.Selected, res.SkippedApplied, res.Confirmed, res.Returned, res.Nacked, res.Unknown)
	if res.NotSent > 0 {
		s += fmt.Sprintf(", %d not sent", res.NotSent)
	}
	if res.Taken > 0 {
		s += fmt.Sprintf("; %d read, %d moved, %d kept in %s", res.Taken, res.Moved, res.Kept, sanitize.Text(queue))
	}
	if res.Cancelled {
		s += " (cancelled)"
	}
	return s
}
