package mgmt

import (
	"context"
	"strings"

	"github.com/warrenops/warren/domain"
)

// errorSuffixes are the names frameworks give a queue's own error queues:
// MassTransit's <queue>_error and <queue>_skipped, and the <queue>.dlq of
// Spring Cloud Stream's RabbitMQ binder. The first is the queue's DLQ;
// the others pair with it too.
var errorSuffixes = []string{"_error", ".dlq", "_skipped"}

// sharedErrorQueues are the error queues frameworks share between every
// endpoint: NServiceBus's and EasyNetQ's defaults. They pair with their
// origins by what their messages say.
var sharedErrorQueues = []string{"error", "EasyNetQ_Default_Error_Queue"}

// pairErrorQueues pairs the queues that the broker's dead-lettering left
// unpaired with the error queues frameworks write: by a framework's
// naming, then by what the messages of an error queue said (learned). It
// marks every queue named as an error queue, so it is judged as a DLQ
// while unpaired.
func pairErrorQueues(queues []domain.Queue, index map[domain.QueueRef]int, learned []domain.DLQOverride) {
	for i := range queues {
		q := &queues[i]
		if isErrorName(q.Name) {
			q.ErrorQueue = true
		}
	}
	for i := range queues {
		q := &queues[i]
		if q.DLQ != nil || q.ErrorQueue {
			continue
		}
		for _, suffix := range errorSuffixes {
			ref := domain.QueueRef{Vhost: q.Vhost, Name: q.Name + suffix}
			if _, ok := index[ref]; ok {
				q.DLQ, q.DLQSource = &ref, domain.PairedByNaming
				break
			}
		}
	}
	for _, l := range learned {
		i, ok := index[domain.QueueRef{Vhost: l.Vhost, Name: l.Queue}]
		if !ok || queues[i].DLQ != nil || l.DLQ == l.Queue {
			continue
		}
		if _, ok := index[domain.QueueRef{Vhost: l.Vhost, Name: l.DLQ}]; ok {
			queues[i].DLQ, queues[i].DLQSource = &domain.QueueRef{Vhost: l.Vhost, Name: l.DLQ}, domain.PairedByLetter
		}
	}
}

// ErrorQueueOf is the queue an error queue's name says it serves
// (orders_error → orders), and whether it names one.
func ErrorQueueOf(name string) (string, bool) {
	for _, suffix := range errorSuffixes {
		if base, ok := strings.CutSuffix(name, suffix); ok && base != "" {
			return base, true
		}
	}
	return "", false
}

func isErrorName(name string) bool {
	for _, s := range sharedErrorQueues {
		if name == s {
			return true
		}
	}
	_, ok := ErrorQueueOf(name)
	return ok
}

// Learn pairs queue with the error queue dlq from now on, because dlq's
// messages name queue as their origin (a scan or browse read them); the
// next snapshot pairs them with PairedByLetter unless the broker's
// dead-lettering or the config pairs queue already.
func (c *Client) Learn(vhost, queue, dlq string) {
	if queue == "" || queue == dlq {
		return
	}
	l := domain.DLQOverride{Vhost: vhost, Queue: queue, DLQ: dlq}
	c.mu.Lock()
	for _, k := range c.learned {
		if k.Vhost == vhost && k.Queue == queue {
			c.mu.Unlock()
			return
		}
	}
	if len(c.learned) >= maxLearned {
		c.learned = c.learned[1:]
	}
	c.learned = append(c.learned, l)
	on := c.onLearn
	c.mu.Unlock()
	if on != nil {
		on(l)
	}
}

// maxLearned bounds the pairings learned from messages, oldest dropped
// first: what a hostile publisher names must not grow without end.
const maxLearned = 10_000

// Learned are the pairings Learn was told, oldest first.
func (c *Client) Learned() []domain.DLQOverride {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]domain.DLQOverride(nil), c.learned...)
}

// RouteKey is where a message published to exchange Exchange of vhost
// Vhost with routing key Key goes: the queues its bindings (followed
// through exchange-to-exchange bindings and alternate exchanges) reach.
// The default exchange ("") routes to the queue named Key when it
// exists. Headers and plugin exchanges are taken to reach every queue
// bound to them.
func (c *Client) RouteKey(ctx context.Context, vhost, exchange, key string) ([]domain.QueueRef, error) {
	sc, err := c.scope(ctx, vhost)
	if err != nil {
		return nil, err
	}
	t := domain.Topology{Exchanges: sc.exchanges, Alternates: sc.alternates, Bindings: map[domain.ExchangeRef][]domain.Binding{}}
	want := []domain.ExchangeRef{{Vhost: vhost, Name: exchange}}
	for hop := 0; hop <= domain.MaxHops && len(want) > 0; hop++ {
		var next []domain.ExchangeRef
		var fetch []domain.ExchangeRef
		for _, x := range want {
			if _, ok := t.Exchanges[x]; ok && x.Name != "" {
				fetch = append(fetch, x)
			}
		}
		got, err := c.bindingsOf(ctx, fetch)
		if err != nil {
			return nil, err
		}
		for x, list := range got {
			t.Bindings[x] = list
			for _, b := range list {
				if b.ToExchange {
					next = append(next, domain.ExchangeRef{Vhost: vhost, Name: b.Destination})
				}
			}
			if ae := t.Alternates[x]; ae != "" {
				next = append(next, domain.ExchangeRef{Vhost: vhost, Name: ae})
			}
		}
		want = next
	}
	t.IndexDirect()
	out := map[domain.QueueRef]bool{}
	t.Reach(domain.ExchangeRef{Vhost: vhost, Name: exchange}, key, out)
	refs := make([]domain.QueueRef, 0, len(out))
	for r := range out {
		refs = append(refs, r)
	}
	return refs, nil
}

// QueueBindings are the bindings whose destination is the queue ref,
// the default exchange's implicit one included (its Source is "").
func (c *Client) QueueBindings(ctx context.Context, ref domain.QueueRef) ([]domain.Binding, error) {
	var raw []rawBinding
	if err := c.get(ctx, "queues/"+esc(ref.Vhost)+"/"+esc(ref.Name)+"/bindings", nil, &raw); err != nil {
		return nil, err
	}
	out := make([]domain.Binding, len(raw))
	for i, b := range raw {
		out[i] = b.binding()
	}
	return out, nil
}
