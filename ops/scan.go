package ops

import (
	"context"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
)

// Scan reads the whole DLQ for statistics on a connection of its own,
// with what browsing knows (logical IDs, attempts, origin limits), under
// the delivery-limit guard unless allowRisk: the override the operator
// gave the browse (O), which a read-only context refuses here as
// Browse does, since a scan returns every message of the queue.
func (o *Ops) Scan(ctx context.Context, ref domain.QueueRef, allowRisk bool, progress func(read int)) (*domain.Stats, error) {
	if allowRisk {
		if err := o.writable("a whole-queue scan that may cost deliveries (--allow-limit-risk)"); err != nil {
			return nil, err
		}
	}
	t, err := o.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	t.Opts.AllowLimitRisk = allowRisk
	return o.ScanTarget(ctx, t, progress)
}

// ScanTarget scans a resolved DLQ; a guard refusal is a
// *domain.RefusedError.
func (o *Ops) ScanTarget(ctx context.Context, t *Target, progress func(read int)) (*domain.Stats, error) {
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	st, err := dlq.Scan(ctx, conn, t.Info, t.Opts, progress)
	if err == nil {
		for _, g := range st.Groups.List() {
			if g.Convention != domain.ConventionBroker {
				o.learn(t.Ref, g.OriginQueue)
			}
		}
	}
	return st, err
}

// GroupInbox is what a queue's inbox says of one failure group's letters:
// how many it applied, how many are pending, and how many it cannot
// judge (a letter without a business ID).
type GroupInbox struct {
	Known                   bool
	Applied, Pending, NoIDs int
}

// lookupBatch bounds the logical IDs of one inbox query.
const lookupBatch = 1000

// GroupsInbox asks the inbox of t about every group of a scan made with
// t.Opts.GroupIDs: Known is false for all when the queue has no inbox
// or it cannot answer, and the error says why.
func (o *Ops) GroupsInbox(ctx context.Context, t *Target, groups []domain.Group) (map[string]GroupInbox, error) {
	out := make(map[string]GroupInbox, len(groups))
	if !o.HasInbox(t.InboxOf) {
		return out, ErrNoInbox
	}
	for _, g := range groups {
		gi := GroupInbox{Known: true, NoIDs: g.Count - len(g.BusinessIDs)}
		for start := 0; start < len(g.BusinessIDs); start += lookupBatch {
			ids := g.BusinessIDs[start:min(start+lookupBatch, len(g.BusinessIDs))]
			applied, err := o.Lookup(ctx, t.InboxOf, ids)
			if err != nil {
				return map[string]GroupInbox{}, err
			}
			for _, id := range ids {
				if _, ok := applied[id]; ok {
					gi.Applied++
				} else {
					gi.Pending++
				}
			}
		}
		out[g.ID] = gi
	}
	return out, nil
}
