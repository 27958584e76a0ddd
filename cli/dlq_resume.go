package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/sanitize"
)

type resumeFlags struct {
	operation, vhost string
	dryRun, yes      bool
	asJSON           bool
	allowRisk        bool
}

const resumeLong = `Finish the latest incomplete operation on QUEUE (or the one --operation names)
from the audit log: the DLQ twins of copies whose confirm was recorded are
removed (matched by message ID, logical ID and body sha256, never by
position); the rest of the queue is decided as the operation decided it, so
what was never published is processed, and what was published without a
recorded confirm is published again unless the inbox reports it applied, and
reported as a possible duplicate. Then the final record is written.`

func newDlqResumeCmd(a *App) *cobra.Command {
	var f resumeFlags
	run := func(cmd *cobra.Command, args []string) error { return a.runDlqResume(cmd.Context(), args[0], f) }
	cmd := &cobra.Command{Use: "resume QUEUE", Args: oneQueue, RunE: run, Long: resumeLong,
		Short: "Finish an interrupted replay or quarantine from the audit log, after a prompt"}
	fl := cmd.Flags()
	fl.StringVar(&f.operation, "operation", "", "the operation to finish (default: the latest incomplete one on QUEUE)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "say what would be done and change nothing")
	fl.BoolVar(&f.yes, "yes", false, "do not ask; required without a terminal")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fl.StringVar(&f.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "act on a quorum DLQ whose delivery limit a return counts against (see the refusal)")
	return cmd
}

// resumeJSON is the `dlq resume --json` contract.
type resumeJSON struct {
	Operation      string `json:"operation"`
	Resumed        int    `json:"resumed"`
	Deduplicated   int    `json:"deduplicated"`
	Confirmed      int    `json:"confirmed"`
	Returned       int    `json:"returned"`
	Nacked         int    `json:"nacked"`
	Unknown        int    `json:"unknown"`
	SkippedApplied int    `json:"skipped_applied"`
	// AuditHead is the head after the final record, as for replay.
	AuditHead *audit.Head `json:"audit_head,omitempty"`
}

func (a *App) runDlqResume(ctx context.Context, queue string, f resumeFlags) error {
	c, err := a.Config()
	if err != nil {
		return err
	}
	if c.ReadOnly && !f.dryRun {
		return Refused(fmt.Errorf("context %q is read-only: resume refused (--dry-run says what it would do)", c.Name))
	}
	if !f.dryRun && !f.yes && !IsTerminal(a.In) {
		return Refused(errors.New("no terminal to confirm on: pass --yes to resume, or --dry-run to see what it would do"))
	}
	o, t, err := a.dlqTarget(ctx, queue, readFlags{vhost: f.vhost, allowRisk: f.allowRisk})
	if err != nil {
		return err
	}
	defer o.Close()
	if !f.dryRun {
		if err := o.CheckAudit(ctx); err != nil {
			return Refused(err)
		}
	}
	if t.Info.Type == domain.TypeStream {
		return Usage(fmt.Errorf("%s is a stream: nothing was removed from it, so there is nothing to resume", sanitize.Text(queue)))
	}
	r, err := o.Resumable(ctx, t, f.operation)
	var bad *actions.RequestError
	if errors.As(err, &bad) {
		return Usage(err)
	}
	if err != nil {
		return err
	}
	pre, err := o.PreviewResume(ctx, t, r)
	var refused *domain.RefusedError
	if errors.As(err, &refused) {
		return Refused(err)
	}
	if err != nil {
		return err
	}
	summary := ops.ResumeQuestion(r, pre)
	if f.dryRun {
		if f.asJSON {
			return writeJSON(a.Out, resumeJSON{Operation: r.Op.ID})
		}
		fmt.Fprintln(a.Out, "dry run: "+sanitize.Text(summary))
		return nil
	}
	// The count to type is the messages the resume would move.
	if err := a.confirm(ctx, queue, summary, pre.Moving, actionFlags{yes: f.yes}); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer bulkMemory()()
	res, err := o.Resume(ctx, t, r, a.progressPrinter("resume"))
	if errors.Is(err, actions.ErrAuditUnavailable) {
		return Refused(err)
	}
	if res.Operation != "" {
		if f.asJSON {
			if jerr := writeJSON(a.Out, resumeJSON{Operation: res.Operation, Resumed: res.Selected, Deduplicated: res.Deduplicated,
				Confirmed: res.Confirmed, Returned: res.Returned, Nacked: res.Nacked, Unknown: res.Unknown,
				SkippedApplied: res.SkippedApplied, AuditHead: res.AuditHead}); jerr != nil && err == nil {
				err = jerr
			}
		} else {
			fmt.Fprintln(a.Out, ops.ResumedText(res))
			printAuditHead(a.Out, res.AuditHead)
		}
		printNotes(a.Err, res.Notes)
	}
	if err != nil {
		return err
	}
	if left := res.Left(); left > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d messages were not moved and stay in %s (operation %s; see `warren audit tail`)",
			left, sanitize.Text(queue), res.Operation)}
	}
	return nil
}
