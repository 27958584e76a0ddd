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
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/ui/sanitize"
)

// defaultActionLimit caps how many dead letters one command holds and
// acts on; a bigger DLQ takes several runs, each with its own prompt.
const defaultActionLimit = 10000

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
	reason, vhost  string
	rate           float64
	limit          int
	includeApplied bool
	dryRun, yes    bool
	asJSON         bool
	allowRisk      bool
}

func newDlqReplayCmd(a *App) *cobra.Command {
	f := actionFlags{action: actions.ActionReplay}
	cmd := &cobra.Command{
		Use:   "replay QUEUE",
		Short: "Republish dead letters to the queue they died in (or --to), after a prompt",
		Long: "Republish the dead letters of QUEUE to the queue each one died in, through the\n" +
			"default exchange, so only the consumer that failed sees it again. Messages the\n" +
			"inbox reports applied are skipped unless --include-applied; quarantined ones are\n" +
			"left out unless QUEUE is their parking queue (a release). A source message is\n" +
			"removed only once its copy was confirmed and routed; every other stays.",
		Args: oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runDlqAction(cmd.Context(), args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "publish to EXCHANGE[/ROUTING_KEY] instead (no key: each message's original one)")
	fl.Float64Var(&f.rate, "rate", 0, "at most N messages per second (0: unlimited)")
	fl.BoolVar(&f.includeApplied, "include-applied", false, "replay messages the inbox reports applied too")
	addActionFlags(cmd, &f)
	return cmd
}

func newDlqQuarantineCmd(a *App) *cobra.Command {
	f := actionFlags{action: actions.ActionQuarantine}
	cmd := &cobra.Command{
		Use:   "quarantine QUEUE",
		Short: "Move dead letters to the DLQ's parking queue with a reason, after a prompt",
		Long: "Move dead letters of QUEUE to its parking queue (config quarantine, default\n" +
			"QUEUE.quarantine, declared durable if missing) with headers naming the reason,\n" +
			"who and when. Quarantined messages stay out of bulk replays; replaying from the\n" +
			"parking queue releases them.",
		Args: oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runDlqAction(cmd.Context(), args[0], f) },
	}
	cmd.Flags().StringVar(&f.reason, "reason", "", "why these messages are quarantined (required)")
	addActionFlags(cmd, &f)
	return cmd
}

// oneQueue makes a missing or extra QUEUE argument bad usage (exit 2).
func oneQueue(cmd *cobra.Command, args []string) error {
	if err := cobra.ExactArgs(1)(cmd, args); err != nil {
		return Usage(fmt.Errorf("%s: %w", cmd.CommandPath(), err))
	}
	return nil
}

func addActionFlags(cmd *cobra.Command, f *actionFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.filter, "filter", "", `only messages matching EXPR, e.g. 'reason == "rejected" && attempts >= 3'`)
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing")
	fl.BoolVar(&f.yes, "yes", false, "do not ask; required without a terminal")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fl.StringVar(&f.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.IntVar(&f.limit, "limit", defaultActionLimit, "act on at most N messages")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "act on a quorum DLQ whose delivery limit a browse counts against (see the refusal)")
}

// actionRequest is a validated command line.
type actionRequest struct {
	vhost   string
	filter  actions.Matcher // nil without --filter
	to      *actions.Override
	parking string // quarantine destination
	release bool   // queue is a parking queue
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
	st, err := a.AuditStore()
	if err != nil {
		return err
	}
	defer st.Close()
	if !f.dryRun {
		if err := st.Check(ctx); err != nil {
			return Refused(fmt.Errorf("%w (%s): %v; nothing was changed", actions.ErrAuditUnavailable, st.Describe(), err))
		}
	}
	t, err := a.resolveDLQ(ctx, queue, readFlags{vhost: req.vhost, allowRisk: f.allowRisk})
	if err != nil {
		return err
	}
	req.release = t.knows.Release
	if f.action == actions.ActionQuarantine {
		if req.release {
			return Usage(fmt.Errorf("%s is a parking queue already; replay from it to release its messages", sanitize.Text(queue)))
		}
		req.parking = t.knows.Parking
	}
	t.opts.Window = min(actionBrowseWindow, f.limit)
	sess, closeBrowse, err := a.browse(ctx, t)
	if err != nil {
		return err
	}
	defer closeBrowse()
	letters, notes, err := holdLetters(ctx, sess, f.limit)
	if err != nil {
		return err
	}
	applied, known, inboxNote := a.lookupApplied(ctx, t.vhost, t.inboxOf, letters)
	if inboxNote != "" {
		notes = append(notes, inboxNote)
	}
	plan, err := actions.NewPlan(actions.Request{
		Action: f.action, Vhost: req.vhost, Queue: queue, Letters: letters,
		Filter: req.filter, FilterText: f.filter, Applied: applied, InboxKnown: known,
		IncludeApplied: f.includeApplied, Release: req.release, To: req.to,
		Parking: req.parking, Reason: f.reason, Rate: f.rate, Now: time.Now(),
	})
	if err != nil {
		return Usage(err)
	}
	for _, n := range notes {
		fmt.Fprintln(a.Err, "note:", sanitize.Text(n))
	}
	if f.dryRun || plan.Selected() == 0 {
		return a.printPlan(plan, f)
	}
	if !f.yes {
		threshold := c.ConfirmThreshold
		if threshold <= 0 {
			threshold = config.DefaultConfirmThreshold
		}
		phrase := ""
		if c.IsProd() || plan.Selected() > threshold {
			phrase = fmt.Sprintf("%s %d", queue, plan.Selected())
		}
		ok, err := confirmAction(a.In, a.Err, sanitize.Text(plan.Summary()), sanitize.Text(phrase))
		if err != nil {
			return err
		}
		if !ok {
			return Refused(errors.New("not confirmed; nothing was changed"))
		}
	}
	// Publishing gets a connection of its own, so flow control on the
	// copies never holds up the acks of the browse channel.
	conn, err := a.DialAMQP(t.vhost)
	if err != nil {
		return err
	}
	defer conn.Close()
	host, _ := os.Hostname()
	env := actions.Env{
		Conn: conn, Session: sess, Stream: sess.ReadOnly(), Audit: st,
		Operator: a.OperatorName(), Host: host, Context: c.Name, ConnUser: c.Username,
	}
	return a.executePlan(ctx, plan, env, f)
}

func parseAction(c *config.Context, queue string, f actionFlags) (*actionRequest, error) {
	r := &actionRequest{vhost: f.vhost}
	if r.vhost == "" {
		r.vhost = c.Vhost
	}
	if r.vhost == "" {
		r.vhost = "/"
	}
	switch {
	case f.rate < 0:
		return nil, fmt.Errorf("--rate %g: want 0 (unlimited) or more", f.rate)
	case f.limit < 1 || f.limit > maxActionLimit:
		return nil, fmt.Errorf("--limit %d: want 1 to %d", f.limit, maxActionLimit)
	case f.action == actions.ActionQuarantine && strings.TrimSpace(f.reason) == "":
		return nil, errors.New("--reason is required: say why these messages are quarantined")
	}
	if f.filter != "" {
		flt, err := dlq.CompileFilter(f.filter)
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
func holdLetters(ctx context.Context, sess *dlq.Session, limit int) ([]dlq.DeadLetter, []string, error) {
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

// lookupApplied asks the inbox which logical IDs were applied. Without an
// inbox, or when it fails, the status is unknown and nothing is skipped.
func (a *App) lookupApplied(ctx context.Context, vhost, queue string, letters []dlq.DeadLetter) (map[string]bool, bool, string) {
	ib, err := a.Inbox(ctx, vhost, queue)
	if err != nil {
		return nil, false, fmt.Sprintf("inbox unavailable (%v): applied messages cannot be skipped", err)
	}
	if ib == nil {
		return nil, false, ""
	}
	defer ib.Close()
	ids := make([]string, 0, len(letters))
	for _, d := range letters {
		if d.LogicalIDFrom != dlq.IDHash && d.LogicalID != "" {
			ids = append(ids, d.LogicalID)
		}
	}
	found, err := ib.Lookup(ctx, ids)
	if err != nil {
		return nil, false, fmt.Sprintf("inbox lookup failed (%v): applied messages cannot be skipped", err)
	}
	applied := make(map[string]bool, len(found))
	for id := range found {
		applied[id] = true
	}
	return applied, true, ""
}

// confirmAction asks question on w and reads the answer from r: "y" or,
// when phrase is set, the phrase typed exactly.
func confirmAction(r io.Reader, w io.Writer, question, phrase string) (bool, error) {
	if phrase == "" {
		fmt.Fprintf(w, "%s [y/N] ", question)
	} else {
		fmt.Fprintf(w, "%s\nType %q to confirm: ", question, phrase)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	line = strings.TrimSpace(line)
	if phrase != "" {
		return line == phrase, nil
	}
	return strings.EqualFold(line, "y") || strings.EqualFold(line, "yes"), nil
}

func (a *App) printPlan(plan *actions.Plan, f actionFlags) error {
	if f.asJSON {
		return writeActionJSON(a.Out, &actions.Result{Selected: plan.Selected(), SkippedApplied: len(plan.SkippedApplied)})
	}
	if f.dryRun {
		fmt.Fprint(a.Out, "dry run: ")
	}
	fmt.Fprintln(a.Out, sanitize.Text(plan.Summary()))
	for _, l := range plan.Lines() {
		fmt.Fprintln(a.Out, "  "+sanitize.Text(l))
	}
	return nil
}

// executePlan runs plan on env's browse session and reports.
// Interrupting it stops the sending; what is in flight still settles.
func (a *App) executePlan(ctx context.Context, plan *actions.Plan, env actions.Env, f actionFlags) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var progress func(actions.Progress)
	if IsTerminal(a.Err) {
		progress = func(p actions.Progress) {
			fmt.Fprintf(a.Err, "\r%s: %d/%d published, %d confirmed, %d returned, %d nacked, %d unknown",
				plan.Action, p.Published, p.Total, p.Confirmed, p.Returned, p.Nacked, p.Unknown)
			if p.Done {
				fmt.Fprintln(a.Err)
			}
		}
	}
	res, err := actions.Execute(ctx, plan, env, progress)
	if errors.Is(err, actions.ErrAuditUnavailable) {
		return Refused(err)
	}
	if res != nil {
		if f.asJSON {
			if jerr := writeActionJSON(a.Out, res); jerr != nil && err == nil {
				err = jerr
			}
		} else {
			fmt.Fprintln(a.Out, resultLine(plan, res))
		}
	}
	if err != nil {
		return err
	}
	if left := res.Returned + res.Nacked + res.Unknown + res.NotSent; left > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d messages were not moved and stay in %s (operation %s; see `warren audit tail`)",
			left, res.Selected, sanitize.Text(plan.Queue), res.Operation)}
	}
	return nil
}

func resultLine(plan *actions.Plan, res *actions.Result) string {
	s := fmt.Sprintf("%s %s: %d selected, %d skipped as applied, %d confirmed, %d returned, %d nacked, %d unknown",
		plan.Action, res.Operation, res.Selected, res.SkippedApplied, res.Confirmed, res.Returned, res.Nacked, res.Unknown)
	if res.NotSent > 0 {
		s += fmt.Sprintf(", %d not sent", res.NotSent)
	}
	if res.Cancelled {
		s += " (cancelled)"
	}
	return s
}

func writeActionJSON(w io.Writer, res *actions.Result) error {
	return writeJSON(w, res)
}
