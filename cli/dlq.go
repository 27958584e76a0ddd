package cli

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newDlqCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{Use: "dlq", Short: "Read dead-letter queues and act on their messages"}
	cmd.AddCommand(newDlqLsCmd(a), newDlqShowCmd(a), newDlqStatsCmd(a), newDlqGroupsCmd(a), newDlqReplayCmd(a), newDlqQuarantineCmd(a), newDlqResumeCmd(a), newDlqEditCmd(a), newDlqExportCmd(a), newDlqImportCmd(a))
	return cmd
}

// readFlags are the flags every reading dlq command shares.
type readFlags struct {
	vhost     string
	allowRisk bool
	asJSON    bool
	// action is what the command will do with what it reads, if
	// anything: refused up front where the context refuses it.
	action ops.Action
}

func addReadFlags(cmd *cobra.Command, f *readFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "browse a quorum DLQ whose delivery limit a browse would count against (see the refusal)")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON; values are exact, not sanitised")
}

// vhostOf is the vhost a command works in: the flag, else the context's,
// else /.
func vhostOf(c *config.Context, flag string) string {
	return cmp.Or(flag, c.Vhost, "/")
}

// dlqTarget resolves QUEUE through the operations layer, which the
// command then reads and acts through; close the layer when done.
func (a *App) dlqTarget(ctx context.Context, queue string, f readFlags) (*ops.Ops, *ops.Target, error) {
	o, err := a.Factory().Ops()
	if err != nil {
		return nil, nil, err
	}
	if f.action != "" {
		// An action that will be refused is refused before anything is
		// read.
		if err := o.CheckWritable(f.action); err != nil {
			o.Close()
			return nil, nil, exitFor(err)
		}
	}
	t, err := o.Resolve(ctx, domain.QueueRef{Vhost: vhostOf(o.Context(), f.vhost), Name: queue})
	if err != nil {
		o.Close()
		return nil, nil, err
	}
	t.Opts.AllowLimitRisk = f.allowRisk
	return o, t, nil
}

// browse opens a session on the target; a guard refusal exits 3.
func (a *App) browse(ctx context.Context, o *ops.Ops, t *ops.Target) (*ops.Browse, func(), error) {
	b, err := o.Browse(ctx, t)
	if err != nil {
		return nil, nil, exitFor(err)
	}
	return b, func() {
		if err := b.Close(); err != nil {
			fmt.Fprintf(a.Err, "warning: returning messages to %s: %v (the broker takes them back as the connection closes)\n", sanitize.Text(t.Ref.Name), err)
		}
	}, nil
}

// listed is one dead letter a command prints, with its inbox status.
type listed struct {
	domain.DeadLetter
	status  domain.InboxStatus
	applied time.Time
}

// collect pages through the session until limit letters match (or the
// queue ends), looking up each page's inbox statuses in one query.
func collect(ctx context.Context, sess *ops.Browse, ib *inbox.Pager, flt *domain.Filter, keep func(domain.DeadLetter) bool, limit int) ([]listed, []string, error) {
	l, err := collectListing(ctx, sess, ib, flt, keep, limit)
	return l.rows, l.notes, err
}

// listing is what a browse listed, and how much of the queue it read,
// in the words of a scan (domain.Stats): read is its Total, the
// messages read, listed or not (a filter's, the guard's); expected the
// queue's depth when the browse began, -1 for a stream (read to its
// tail); complete is false when the listing stopped at its limit before
// a message it would have listed, or before reading expected messages
// (consumers or expiry took some meanwhile).
type listing struct {
	rows           []listed
	notes          []string
	read, expected int
	complete       bool
}

// collectListing is collect, saying how much of the queue it read.
func collectListing(ctx context.Context, sess *ops.Browse, ib *inbox.Pager, flt *domain.Filter, keep func(domain.DeadLetter) bool, limit int) (listing, error) {
	var out []listed
	var notes []string
	refused, evalErrs, more := 0, 0, false
	var firstEval error
	var last *dlq.Page
	now := time.Now()
	for len(out) < limit {
		page, err := sess.Next(ctx)
		if err != nil {
			return listing{}, err
		}
		last = page
		notes = append(notes, page.Notes...)
		refused += len(page.Refused)
		st, found := ib.Statuses(ctx, domain.BusinessIDs(page.Letters))
		for i, d := range page.Letters {
			if keep != nil && !keep(d) {
				continue
			}
			if flt != nil {
				ok, err := flt.Match(d, st[i].Applied(), now)
				if err != nil && len(out) < limit {
					evalErrs++
					if firstEval == nil {
						firstEval = err
					}
				}
				if !ok {
					continue
				}
			}
			// Past the limit, only a letter that would be listed makes
			// the listing short of the queue.
			if len(out) == limit {
				more = true
				continue
			}
			out = append(out, listed{DeadLetter: d, status: st[i], applied: found[d.LogicalID]})
		}
		if page.End {
			break
		}
		more = more || len(out) == limit
	}
	l := listing{rows: out, expected: -1}
	if last != nil {
		l.read, l.expected = last.Seen, last.Expected
		l.complete = !more && last.End && (last.Expected < 0 || last.Seen >= last.Expected)
	}
	if more {
		notes = append(notes, fmt.Sprintf("--limit %d reached: the queue has more messages", limit))
	}
	if refused > 0 {
		notes = append(notes, format.Messages(refused)+" not listed: the delivery-limit guard refused them (no headroom left)")
	}
	if evalErrs > 0 {
		notes = append(notes, fmt.Sprintf("the filter could not be evaluated on %s, left out: %v", format.Messages(evalErrs), firstEval))
	}
	if r := ib.Reason(); r != "" {
		notes = append(notes, "inbox status unknown: "+r)
	}
	l.notes = notes
	return l, nil
}
