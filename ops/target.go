package ops

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
)

// Target is a DLQ with what reading it needs, resolved from one snapshot
// of its vhost.
type Target struct {
	Ref  domain.QueueRef
	Info domain.QueueInfo
	Opts dlq.Options
	// Knows is what the config says of the DLQ, helped by the broker's
	// pairing: the queue it belongs to, its parking queue, whether it is
	// a parking queue itself.
	Knows config.Knowledge
	// InboxOf is the queue whose inbox holds these messages' effects.
	InboxOf domain.QueueRef
	// Confirmed are the queues the DLQ's pairing confirms as origins a
	// framework's headers may name (docs/ARCHITECTURE.md §4.12); exists
	// reports whether a queue of the vhost existed when it was resolved.
	Confirmed map[string]bool
	exists    func(name string) bool
	// Cluster is the broker's cluster name.
	Cluster string
}

// pairing is what Resolve learned of a DLQ's origins.
type pairing struct {
	confirmed map[string]bool
	exists    func(name string) bool
}

// Resolve reads the DLQ and the queues around it from one snapshot of
// its vhost: its type, delivery limit and consumers, the broker's
// version, the config's knowledge of it, and the delivery limits of its
// quorum origins (so their dead letters show every delivery).
func (o *Ops) Resolve(ctx context.Context, ref domain.QueueRef) (*Target, error) {
	snap, err := o.c.Mgmt.Snapshot(ctx, domain.SnapshotOptions{Vhost: ref.Vhost, RatesFor: []domain.QueueRef{ref}})
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
		Info: domain.QueueInfo{
			Vhost: ref.Vhost, Name: ref.Name, Type: q.Type, DeliveryLimit: q.DeliveryLimit(version),
			BrokerVersion: version, Consumers: q.Consumers, Messages: q.Messages,
			HasDLX: q.HasDLX, Unacked: q.Unacked,
		},
		InboxOf: ref,
		Cluster: snap.Overview.ClusterName,
	}
	if ttl, ok := q.LimitSetting("message-ttl"); ok && ttl >= 0 {
		d := time.Duration(ttl) * time.Millisecond
		t.Info.MessageTTL = &d
	}
	t.Knows = knowledge(o.c.Context, ref, snap.Sources(ref))
	t.Confirmed, t.exists = confirmedOrigins(snap, *q, o.c.Context.Knowledge(ref.Vhost, ref.Name, nil))
	o.mu.Lock()
	o.known[ref] = t.Knows
	o.confirmed[ref] = pairing{confirmed: t.Confirmed, exists: t.exists}
	o.mu.Unlock()
	t.Opts = dlq.Options{Window: o.c.Window, QuarantineQueue: t.Knows.Parking, OriginDeliveryLimits: snap.OriginDeliveryLimits(ref),
		CarriesDeaths: domain.CarriesPublishedDeaths(version),
		Conventions:   o.c.Conventions(ref.Vhost, ref.Name), KnownOperation: o.knownOperation}
	t.Opts.ConsumerTimeout, t.Opts.TimeoutWhy, t.Opts.AskTimeout = consumerTimeout(*q, version, o.c.Context.ConsumerTimeout.Duration)
	if k := t.Knows.Queue; k != nil {
		t.Opts.LogicalID, t.Opts.AttemptsHeader = k.LogicalID, k.AttemptsHeader
		t.InboxOf.Name = k.Name
	}
	if r, ok := o.c.Mgmt.(ChannelRoomReader); ok {
		// A walk spreads what it keeps over channels: under a user's
		// max-channels limit it takes half the room left once the
		// walk's own other two are set aside (the publisher's, and the
		// one a passive check opens mid-walk; other clients of the
		// user need theirs), at least one. A limit that cannot be read
		// leaves it one: slower where it keeps much, never past a
		// limit.
		switch room, limited, err := r.ChannelRoom(ctx); {
		case err != nil:
			t.Opts.MaxChannels = 1
		case limited:
			t.Opts.MaxChannels = max((room-walkOwnChannels)/2, 1)
		}
	}
	return t, nil
}

// walkOwnChannels are the channels a walk opens besides its feed's: the
// publisher's, and a passive check's.
const walkOwnChannels = 2

// browseAsk is the consumer timeout a browse session asks of a broker
// that takes a consumer's own (RabbitMQ 4.3, a quorum queue).
const browseAsk = time.Hour

// consumerTimeout is the consumer timeout a browse of q runs into, and
// why (docs/ARCHITECTURE.md §4.3): from RabbitMQ 3.12 the queue's own
// (x-consumer-timeout or a policy's consumer-timeout, the smaller when
// both are set), else the broker's consumer_timeout, which the management
// API does not tell (global: the config's, RabbitMQ's 30 minutes by
// default). ask is what the session asks for instead where the broker
// takes a consumer's own and the queue's is shorter.
func consumerTimeout(q domain.Queue, version string, global time.Duration) (timeout time.Duration, why string, ask time.Duration) {
	timeout, why = global, "the broker's consumer_timeout"
	if global == config.DefaultConsumerTimeout {
		why += " (RabbitMQ's default)"
	}
	if domain.AtLeast(version, 3, 12) {
		if ms, ok := q.LimitSetting("consumer-timeout"); ok && ms >= 0 {
			timeout = time.Duration(ms) * time.Millisecond
			why = "the queue's x-consumer-timeout"
			if _, arg := q.Arguments["x-consumer-timeout"]; !arg {
				why = fmt.Sprintf("policy %s's consumer-timeout", q.Policy)
			}
		}
	}
	if domain.AtLeast(version, 4, 3) && q.Type == domain.TypeQuorum && timeout < browseAsk {
		ask = browseAsk
	}
	return timeout, why, ask
}

// knowledge is what the config says about ref, helped by the broker's
// pairing (the queues that dead-letter into it).
func knowledge(c *config.Context, ref domain.QueueRef, dlqOf []domain.QueueRef) config.Knowledge {
	sources := make([]string, 0, len(dlqOf))
	for _, o := range dlqOf {
		sources = append(sources, o.Name)
	}
	return c.Knowledge(ref.Vhost, ref.Name, sources)
}

// knowledgeOf is what Resolve learned about ref; before any Resolve, only
// the config speaks.
func (o *Ops) knowledgeOf(ref domain.QueueRef) config.Knowledge {
	o.mu.Lock()
	k, ok := o.known[ref]
	o.mu.Unlock()
	if ok {
		return k
	}
	return knowledge(o.c.Context, ref, nil)
}

// confirmedOrigins are the queues the pairing confirms as origins of the
// DLQ dlq's letters (docs/ARCHITECTURE.md §4.12, §7): those whose
// dead-letter exchange routes there (not only the one each picks as its
// DLQ), those the config or a framework's naming pairs with it, and for a
// parking queue those of the DLQ it parks for — never one paired only
// because dlq's own messages named it, since a publisher wrote those.
func confirmedOrigins(snap *domain.Snapshot, dlq domain.Queue, k config.Knowledge) (map[string]bool, func(string) bool) {
	index := make(map[domain.QueueRef]int, len(snap.Queues))
	for i := range snap.Queues {
		index[snap.Queues[i].Ref()] = i
	}
	exists := func(r domain.QueueRef) bool { _, ok := index[r]; return ok }
	targets := map[domain.QueueRef]bool{dlq.Ref(): true}
	if base, ok := strings.CutSuffix(dlq.Name, domain.ParkingSuffix); ok && dlq.Parking {
		targets[domain.QueueRef{Vhost: dlq.Vhost, Name: base}] = true
	}
	out := map[string]bool{}
	for i := range snap.Queues {
		q := &snap.Queues[i]
		if q.DLQ != nil && targets[*q.DLQ] && q.DLQSource != domain.PairedByLetter {
			out[q.Name] = true
			continue
		}
		if r, ok := snap.Topology.DeadLetterRoute(*q, exists); ok {
			for _, t := range r.Targets {
				if targets[t] && t != q.Ref() {
					out[q.Name] = true
				}
			}
		}
	}
	for t := range targets {
		if base, ok := mgmt.ErrorQueueOf(t.Name); ok && exists(domain.QueueRef{Vhost: t.Vhost, Name: base}) {
			out[base] = true
		}
	}
	if k.Queue != nil && k.Queue.Name != "" {
		out[k.Queue.Name] = true
	}
	return out, func(name string) bool { return exists(domain.QueueRef{Vhost: dlq.Vhost, Name: name}) }
}

// pairingOf is what Resolve learned of ref's origins.
func (o *Ops) pairingOf(ref domain.QueueRef) pairing {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.confirmed[ref]
}

// origins confirms the origins framework headers name for an operation on
// ref: its confirmed queues, and routes that reach one of them, read
// from the broker's bindings once per exchange and key.
func (o *Ops) origins(ref domain.QueueRef) actions.Origins {
	p := o.pairingOf(ref)
	queues := p.confirmed
	r, ok := o.c.Mgmt.(router)
	if !ok || len(queues) == 0 {
		return actions.Origins{Known: queues != nil, Queues: queues, Exists: p.exists}
	}
	var mu sync.Mutex
	seen := map[[2]string]bool{}
	return actions.Origins{Known: queues != nil, Queues: queues, Exists: p.exists, Route: func(exchange, key string) bool {
		mu.Lock()
		defer mu.Unlock()
		k := [2]string{exchange, key}
		if v, done := seen[k]; done {
			return v
		}
		ctx, cancel := context.WithTimeout(context.Background(), routeTimeout)
		defer cancel()
		refs, err := r.RouteKey(ctx, ref.Vhost, exchange, key)
		ok := false
		for _, q := range refs {
			ok = ok || queues[q.Name]
		}
		// A route that cannot be read is not confirmed: those
		// messages stay, and the plan says so.
		seen[k] = ok && err == nil
		return seen[k]
	}}
}

// routeTimeout bounds the reading of one exchange's bindings.
const routeTimeout = 10 * time.Second

// router is the management client's routing, which a fake may lack.
type router interface {
	RouteKey(ctx context.Context, vhost, exchange, key string) ([]domain.QueueRef, error)
}

// learner is the management client's memory of pairings learned from
// messages, which a fake may lack.
type learner interface {
	Learn(vhost, queue, dlq string)
}

// learn pairs the error queue ref with the origin queues its framework
// letters name, so the next snapshot shows them paired (PairedByLetter).
func (o *Ops) learn(ref domain.QueueRef, origins ...string) {
	l, ok := o.c.Mgmt.(learner)
	if !ok {
		return
	}
	for _, q := range origins {
		if q != "" && q != domain.OtherKey && q != domain.NoneKey {
			l.Learn(ref.Vhost, q, ref.Name)
		}
	}
}

// frameworkOrigins are the origin queues framework letters name.
func frameworkOrigins(letters []domain.DeadLetter) []string {
	var out []string
	for _, d := range letters {
		if c := d.Failure.Convention; c != "" && c != domain.ConventionBroker && d.Failure.OriginQueue != "" {
			out = append(out, d.Failure.OriginQueue)
		}
	}
	return out
}
