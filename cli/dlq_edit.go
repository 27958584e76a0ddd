package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

const editLong = `Open $EDITOR (vi when unset) on one dead letter of QUEUE: a JSON document
with its application headers ("headers"), how the body is written
("body_format": json, text or base64) and the body ("body"; a JSON body as JSON,
sent compact). The broker's x-death headers and warren's own are not in the file
and are kept. After the editor exits, the diff of headers and body is shown and,
once confirmed, the edited copy is published to the queue the message died in
(as a replay would) under the same logical ID, with header x-warren-edited-from
naming the original body's sha256; the original leaves QUEUE only after the
copy is confirmed. Nothing is published when the edit changes nothing, the
editor exits non-zero or the file is no longer valid.`

func newDlqEditCmd(a *App) *cobra.Command {
	var (
		f   actionFlags
		id  string
		fr  readFlags
		lim int
	)
	cmd := &cobra.Command{
		Use:   "edit QUEUE --id LOGICAL_ID",
		Short: "Edit one dead letter's body and headers in $EDITOR and resubmit it, after a diff and a prompt",
		Long:  editLong,
		Args:  oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			if id == "" {
				return app.Usage(errors.New("--id is required: the logical ID of the message to edit (see dlq ls)"))
			}
			f.action = actions.ActionEdit
			fr.allowRisk = f.allowRisk
			return a.runDlqEdit(cmd.Context(), args[0], id, lim, fr, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&id, "id", "", "logical ID of the message to edit")
	fl.BoolVar(&f.yes, "yes", false, "do not ask after the diff; required without a terminal")
	fl.StringVar(&fr.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.IntVar(&lim, "limit", 10000, "look for the message among the first N messages of QUEUE")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "browse a quorum DLQ whose delivery limit a browse would count against (see the refusal)")
	return cmd
}

func (a *App) runDlqEdit(ctx context.Context, queue, id string, limit int, fr readFlags, f actionFlags) error {
	if !f.yes && !a.isTerminal(a.In) {
		return app.Refused(errors.New("no terminal to confirm on: pass --yes to edit"))
	}
	if limit < 1 {
		return app.Usage(fmt.Errorf("--limit must be at least 1, got %d", limit))
	}
	fr.action = ops.Edit
	o, t, err := a.dlqTarget(ctx, queue, fr)
	if err != nil {
		return err
	}
	defer o.Close()
	sess, closeBrowse, err := a.browse(ctx, o, t)
	if err != nil {
		return err
	}
	defer closeBrowse()
	keep := func(d domain.DeadLetter) bool { return format.MatchesLogicalID(d, id) }
	rows, notes, err := collect(ctx, sess, o.Pager(ctx, t.InboxOf), nil, keep, limit)
	if err != nil {
		return err
	}
	printNotes(a.Err, notes)
	if len(rows) == 0 {
		return fmt.Errorf("no message with logical ID %s in %s: nothing was published", sanitize.Text(id), sanitize.Text(queue))
	}
	if len(rows) > 1 {
		printNotes(a.Err, []string{fmt.Sprintf("%d messages have logical ID %s; editing the first (position %d)", len(rows), id, rows[0].Position)})
	}
	draft, err := o.StartEdit(ctx, t.Ref, sess, rows[0].DeadLetter)
	if err != nil {
		return exitFor(err)
	}
	ed := draft.Command()
	ed.Stdin, ed.Stdout, ed.Stderr = os.Stdin, os.Stdout, os.Stderr
	inEditor.Store(true)
	edited := ed.Run()
	inEditor.Store(false)
	plan, err := o.Plan(ctx, ops.Scope{Action: ops.Edit, Queue: t.Ref, Draft: draft, EditorErr: edited})
	if err != nil {
		return exitFor(err)
	}
	fmt.Fprint(a.Out, sanitize.Block(plan.Diff))
	for _, l := range plan.Lines {
		fmt.Fprintln(a.Out, "  "+sanitize.Text(l))
	}
	printNotes(a.Err, plan.Warnings)
	if err := a.confirm(ctx, plan, f); err != nil {
		var ee *app.ExitError
		if errors.As(err, &ee) && ee.Code == app.ExitRefused {
			return app.Refused(fmt.Errorf("not confirmed: nothing was published; the message stays in %s", sanitize.Text(queue)))
		}
		return err
	}
	res, err := o.Run(ctx, plan, nil)
	return a.report(plan, res, err, f)
}
