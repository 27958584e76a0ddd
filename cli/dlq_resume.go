package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

type resumeFlags struct {
	operation, vhost string
	dryRun, yes      bool
	asJSON           bool
	allowRisk        bool
	noCanary         bool
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
	fl.BoolVar(&f.noCanary, "no-canary", false, "resume a staged replay without a fresh canary (its stages and pace still hold)")
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
	// A staged resume's verdicts, as for replay.
	Canary     *domain.StageVerdict  `json:"canary,omitempty"`
	Stages     []domain.StageVerdict `json:"stages,omitempty"`
	Halted     bool                  `json:"halted"`
	HaltReason string                `json:"halt_reason,omitempty"`
	// AuditHead is the head after the final record, as for replay.
	AuditHead *domain.AuditHead `json:"audit_head,omitempty"`
}

func (a *App) runDlqResume(ctx context.Context, queue string, f resumeFlags) error {
	c, err := a.Factory().Config()
	if err != nil {
		return err
	}
	if !f.dryRun && !f.yes && !a.isTerminal(a.In) {
		return app.Refused(errors.New("no terminal to confirm on: pass --yes to resume, or --dry-run to see what it would do"))
	}
	o, err := a.Factory().Ops()
	if err != nil {
		return err
	}
	defer o.Close()
	defer bulkMemory()() // the plan reads the whole queue, the run walks it
	plan, err := o.Plan(ctx, ops.Scope{
		Action: ops.Resume, Queue: domain.QueueRef{Vhost: vhostOf(c, f.vhost), Name: queue},
		Operation: f.operation, DryRun: f.dryRun, AllowRisk: f.allowRisk, NoCanary: f.noCanary,
	})
	if err != nil {
		return exitFor(err)
	}
	return a.runPlan(ctx, o, plan, actionFlags{action: string(ops.Resume), dryRun: f.dryRun, yes: f.yes, asJSON: f.asJSON})
}

// planJSON is what --json prints for a plan that does not run.
func planJSON(plan *ops.Plan, dryRun bool) any {
	if plan.Action == ops.Resume {
		return resumeJSON{Operation: plan.Operation}
	}
	out := planOut{Counts: domain.Counts{Operation: plan.Operation, Selected: plan.Publish, SkippedApplied: plan.SkippedApplied},
		DryRun: dryRun, Destinations: []destinationJSON{}}
	for _, d := range plan.Destinations {
		out.Destinations = append(out.Destinations, destinationJSON{Name: d.Name, Count: d.Count})
	}
	return out
}

// planOut is a plan that does not run, in the counts a run would print
// (selected: what would be published; operation: the interrupted import
// it would finish), with where the messages would go.
type planOut struct {
	domain.Counts
	DryRun       bool              `json:"dry_run"`
	Destinations []destinationJSON `json:"destinations"`
}

type destinationJSON struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// resultJSON is what --json prints for what an operation did.
func resultJSON(plan *ops.Plan, res ops.Result) any {
	if plan.Action != ops.Resume {
		return res
	}
	return resumeJSON{Operation: res.Operation, Resumed: res.Selected, Deduplicated: res.Deduplicated,
		Confirmed: res.Confirmed, Returned: res.Returned, Nacked: res.Nacked, Unknown: res.Unknown,
		SkippedApplied: res.SkippedApplied, AuditHead: res.AuditHead,
		Canary: res.Canary, Stages: res.Stages, Halted: res.Halted, HaltReason: res.HaltReason}
}
