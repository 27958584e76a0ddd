package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
)

// Target is a DLQ with what reading it needs, resolved from one snapshot
// of its vhost.
type Target struct {
	Ref  mgmt.QueueRef
	Info dlq.QueueInfo
	Opts dlq.Options
	// Knows is what the config says of the DLQ, helped by the broker's
	// pairing: the queue it belongs to, its parking queue, whether it is
	// a parking queue itself.
	Knows config.Knowledge
	// InboxOf is the queue whose inbox holds these messages' effects.
	InboxOf mgmt.QueueRef
	// Unacked is how many of the queue's messages a consumer held when it
	// was resolved: a browse cannot see them.
	Unacked int64
}

// Resolve reads the DLQ and the queues around it from one snapshot of
// its vhost: its type, delivery limit and consumers, the broker's
// version, the config's knowledge of it, and the delivery limits of its
// quorum origins (so their dead letters show every delivery).
func (o *Ops) Resolve(ctx context.Context, ref mgmt.QueueRef) (*Target, error) {
	snap, err := o.c.Mgmt.Snapshot(ctx, mgmt.SnapshotOptions{Vhost: ref.Vhost, RatesFor: []mgmt.QueueRef{ref}})
	if err != nil {
		return nil, err
	}
	q := snap.Queue(ref)
	if q == nil {
		return nil, fmt.Errorf("queue %s not found in vhost %s", ref.Name, ref.Vhost)
	}
	version := snap.Overview.RabbitMQVersion
	t := &Target{
		Ref: ref,
		Info: dlq.QueueInfo{
			Vhost: ref.Vhost, Name: ref.Name, Type: q.Type, DeliveryLimit: q.DeliveryLimit(version),
			BrokerVersion: version, Consumers: q.Consumers, Messages: q.Messages,
			HasDLX: q.HasDLX,
		},
		Unacked: q.Unacked,
		InboxOf: ref,
	}
	if ttl, ok := q.LimitSetting("message-ttl"); ok && ttl >= 0 {
		d := time.Duration(ttl) * time.Millisecond
		t.Info.MessageTTL = &d
	}
	t.Knows = knowledge(o.c.Context, ref, snap.Sources(ref))
	o.mu.Lock()
	o.known[ref] = t.Knows
	o.mu.Unlock()
	t.Opts = dlq.Options{Window: o.c.Window, QuarantineQueue: t.Knows.Parking, OriginDeliveryLimits: snap.OriginDeliveryLimits(ref)}
	if k := t.Knows.Queue; k != nil {
		t.Opts.LogicalID, t.Opts.AttemptsHeader = k.LogicalID, k.AttemptsHeader
		t.InboxOf.Name = k.Name
	}
	return t, nil
}

// knowledge is what the config says about ref, helped by the broker's
// pairing (the queues that dead-letter into it).
func knowledge(c *config.Context, ref mgmt.QueueRef, dlqOf []mgmt.QueueRef) config.Knowledge {
	sources := make([]string, 0, len(dlqOf))
	for _, o := range dlqOf {
		sources = append(sources, o.Name)
	}
	return c.Knowledge(ref.Vhost, ref.Name, sources)
}

// knowledgeOf is what Resolve learned about ref; before any Resolve, only
// the config speaks.
func (o *Ops) knowledgeOf(ref mgmt.QueueRef) config.Knowledge {
	o.mu.Lock()
	k, ok := o.known[ref]
	o.mu.Unlock()
	if ok {
		return k
	}
	return knowledge(o.c.Context, ref, nil)
}
