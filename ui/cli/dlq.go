package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/sanitize"
)

func newDlqCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{Use: "dlq", Short: "Read dead-letter queues and act on their messages"}
	cmd.AddCommand(newDlqLsCmd(a), newDlqShowCmd(a), newDlqStatsCmd(a), newDlqReplayCmd(a), newDlqQuarantineCmd(a))
	return cmd
}

// readFlags are the flags every reading dlq command shares.
type readFlags struct {
	vhost     string
	allowRisk bool
	asJSON    bool
}

func addReadFlags(cmd *cobra.Command, f *readFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "browse a quorum DLQ whose delivery limit a browse would count against (see the refusal)")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON; values are exact, not sanitised")
}

// dlqTarget is one DLQ with what reading it needs.
type dlqTarget struct {
	vhost, name string
	info        dlq.QueueInfo
	opts        dlq.Options
	inboxOf     string // the queue whose inbox holds these messages' effects
	knows       config.Knowledge
	// unacked is how many of the queue's messages a consumer held when
	// it was resolved: a browse cannot see them.
	unacked int64
}

// resolveDLQ reads the DLQ and its origin queues from one management
// snapshot: type, delivery limit, version, consumers, and the delivery
// limits of quorum origins (so their dead letters show every delivery).
func (a *App) resolveDLQ(ctx context.Context, queue string, f readFlags) (*dlqTarget, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	t := &dlqTarget{vhost: f.vhost, name: queue, inboxOf: queue}
	if t.vhost == "" {
		t.vhost = c.Vhost
	}
	if t.vhost == "" {
		t.vhost = "/"
	}
	m, err := a.Mgmt()
	if err != nil {
		return nil, err
	}
	s, err := m.Snapshot(ctx, mgmt.SnapshotOptions{Vhost: t.vhost})
	if err != nil {
		return nil, err
	}
	version := s.Overview.RabbitMQVersion
	byName := make(map[string]*mgmt.Queue, len(s.Queues))
	for i := range s.Queues {
		if s.Queues[i].Vhost == t.vhost {
			byName[s.Queues[i].Name] = &s.Queues[i]
		}
	}
	q := byName[queue]
	if q == nil {
		return nil, fmt.Errorf("queue %s not found in vhost %s", sanitize.Text(queue), sanitize.Text(t.vhost))
	}
	t.info = dlq.QueueInfo{Vhost: t.vhost, Name: queue, Type: q.Type, DeliveryLimit: q.DeliveryLimit(version),
		BrokerVersion: version, Consumers: q.Consumers, Messages: q.Messages}
	t.unacked = q.Unacked
	t.opts = dlq.Options{AllowLimitRisk: f.allowRisk, OriginDeliveryLimits: s.OriginDeliveryLimits(q.Ref())}
	var sources []string
	for _, ref := range s.Sources(q.Ref()) {
		sources = append(sources, ref.Name)
	}
	t.knows = c.Knowledge(t.vhost, queue, sources)
	t.opts.QuarantineQueue = t.knows.Parking
	if k := t.knows.Queue; k != nil {
		t.opts.LogicalID, t.opts.AttemptsHeader = k.LogicalID, k.AttemptsHeader
		t.inboxOf = k.Name
	}
	return t, nil
}

// browse opens a session on the target; a guard refusal exits 3.
func (a *App) browse(ctx context.Context, t *dlqTarget) (*dlq.Session, func(), error) {
	conn, err := a.DialAMQP(t.vhost)
	if err != nil {
		return nil, nil, err
	}
	sess, err := dlq.Open(ctx, conn, t.info, t.opts)
	var refused *dlq.RefusedError
	if errors.As(err, &refused) {
		conn.Close()
		return nil, nil, Refused(err)
	}
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return sess, func() {
		if err := sess.Close(); err != nil {
			fmt.Fprintf(a.Err, "warning: returning messages to %s: %v (the broker takes them back as the connection closes)\n", sanitize.Text(t.name), err)
		}
		conn.Close()
	}, nil
}

// openInbox opens the inbox these messages' effects land in; without
// one every status is unknown, with the reason.
func (a *App) openInbox(ctx context.Context, t *dlqTarget) *inbox.Pager {
	ib, err := a.Inbox(ctx, t.vhost, t.inboxOf)
	if err != nil {
		return inbox.NewPager(nil, err.Error())
	}
	if ib == nil {
		return inbox.NewPager(nil, "no inbox configured for "+t.inboxOf)
	}
	return inbox.NewPager(ib, "")
}

// businessIDs are the page's logical IDs to look up; a content hash is no
// business ID, so it is left empty (status unknown).
func businessIDs(letters []dlq.DeadLetter) []string {
	ids := make([]string, len(letters))
	for i, d := range letters {
		if d.LogicalIDFrom != dlq.IDHash {
			ids[i] = d.LogicalID
		}
	}
	return ids
}

// listed is one dead letter a command prints, with its inbox status.
type listed struct {
	dlq.DeadLetter
	status  inbox.Status
	applied time.Time
}

// collect pages through the session until limit letters match (or the
// queue ends), looking up each page's inbox statuses in one query.
func collect(ctx context.Context, sess *dlq.Session, ib *inbox.Pager, flt *dlq.Filter, keep func(dlq.DeadLetter) bool, limit int) ([]listed, []string, error) {
	var out []listed
	var notes []string
	refused, evalErrs, more := 0, 0, false
	var firstEval error
	now := time.Now()
	for len(out) < limit {
		page, err := sess.Next(ctx)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, page.Notes...)
		refused += len(page.Refused)
		st, found := ib.Statuses(ctx, businessIDs(page.Letters))
		for i, d := range page.Letters {
			if keep != nil && !keep(d) {
				continue
			}
			if len(out) == limit {
				more = true
				continue
			}
			if flt != nil {
				ok, err := flt.Match(d, st[i].Applied(), now)
				if err != nil {
					evalErrs++
					if firstEval == nil {
						firstEval = err
					}
				}
				if !ok {
					continue
				}
			}
			out = append(out, listed{DeadLetter: d, status: st[i], applied: found[d.LogicalID]})
		}
		if page.End {
			break
		}
		more = more || len(out) == limit
	}
	if more {
		notes = append(notes, fmt.Sprintf("--limit %d reached: the queue has more messages", limit))
	}
	if refused > 0 {
		notes = append(notes, fmt.Sprintf("%d messages not listed: the delivery-limit guard refused them (no headroom left)", refused))
	}
	if evalErrs > 0 {
		notes = append(notes, fmt.Sprintf("the filter could not be evaluated on %d messages, left out: %v", evalErrs, firstEval))
	}
	if r := ib.Reason(); r != "" {
		notes = append(notes, "inbox status unknown: "+r)
	}
	return out, notes, nil
}
