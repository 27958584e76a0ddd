package mgmt

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/warrenops/warren/domain"
)

// topologyTTL is how long exchanges, policies and dead-letter bindings are
// reused at least. They change rarely, and re-reading them every 2 s
// refresh would cost a request per dead-letter exchange; a fix made by
// the operator shows within this delay. On a broker where a snapshot
// takes longer than a few seconds they are reused for four snapshots'
// time (topologyReuse).
const topologyTTL = 15 * time.Second

// topologyReuse is how long the topology is reused: topologyTTL, or four
// times what the last snapshot took when that is longer (100 000 queues
// in ten vhosts: a snapshot of about 19 s, whose every refresh re-read
// ten vhosts' bindings, 10-20 s of the broker's time, until this).
func (c *Client) topologyReuse() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(topologyTTL, 4*c.lastSnapshot)
}

// bulkBindings is the number of dead-letter exchanges in one vhost above
// which all of its bindings are read in one request instead of one
// request per exchange.
const bulkBindings = 16

type scopeEntry struct {
	at         time.Time
	exchanges  map[domain.ExchangeRef]string
	alternates map[domain.ExchangeRef]string
	// policies maps vhost → policy name → definition.
	policies map[string]map[string]map[string]any
}

type bindingEntry struct {
	at   time.Time
	list []domain.Binding
}

type topoCache struct {
	scopes   map[string]*scopeEntry // by vhost, "" = all
	bindings map[domain.ExchangeRef]bindingEntry
}

// scope returns exchanges and policies for vhost ("" = all), cached.
func (c *Client) scope(ctx context.Context, vhost string) (*scopeEntry, error) {
	now := time.Now()
	ttl := c.topologyReuse()
	c.mu.Lock()
	for _, key := range []string{vhost, ""} {
		if e := c.topo.scopes[key]; e != nil && now.Sub(e.at) < ttl {
			c.mu.Unlock()
			return e, nil
		}
	}
	c.mu.Unlock()

	var xs []rawExchange
	var ps []rawPolicy
	err := parallel(ctx,
		func(ctx context.Context) error {
			q := url.Values{"disable_stats": {"true"}, "columns": {"name,vhost,type,arguments"}}
			return c.get(ctx, inVhost("exchanges", vhost), q, &xs)
		},
		func(ctx context.Context) error { return c.get(ctx, inVhost("policies", vhost), nil, &ps) },
	)
	if err != nil {
		return nil, err
	}
	e := &scopeEntry{at: now, exchanges: map[domain.ExchangeRef]string{}, alternates: map[domain.ExchangeRef]string{},
		policies: map[string]map[string]map[string]any{}}
	for _, x := range xs {
		ref := domain.ExchangeRef{Vhost: x.Vhost, Name: x.Name}
		e.exchanges[ref] = x.Type
		if ae, ok := x.Arguments["alternate-exchange"].(string); ok {
			e.alternates[ref] = ae
		}
	}
	for _, p := range ps {
		if e.policies[p.Vhost] == nil {
			e.policies[p.Vhost] = map[string]map[string]any{}
		}
		e.policies[p.Vhost][p.Name] = map[string]any(p.Definition)
	}
	c.mu.Lock()
	if c.topo.scopes == nil {
		c.topo.scopes = map[string]*scopeEntry{}
	}
	c.topo.scopes[vhost] = e
	c.mu.Unlock()
	return e, nil
}

// deadLetterTopology reads the source bindings of the dead-letter
// exchanges the queues name, following exchange-to-exchange bindings and
// alternate exchanges.
func (c *Client) deadLetterTopology(ctx context.Context, sc *scopeEntry, queues []domain.Queue) (domain.Topology, error) {
	t := domain.Topology{Exchanges: sc.exchanges, Alternates: sc.alternates, Bindings: map[domain.ExchangeRef][]domain.Binding{}}
	var want []domain.ExchangeRef
	seen := map[domain.ExchangeRef]bool{}
	add := func(x domain.ExchangeRef) {
		if x.Name == "" || seen[x] {
			return
		}
		if _, exists := t.Exchanges[x]; !exists {
			return
		}
		seen[x] = true
		want = append(want, x)
	}
	for _, q := range queues {
		if q.HasDLX {
			add(domain.ExchangeRef{Vhost: q.Vhost, Name: q.DeadLetterExchange})
		}
	}
	for hop := 0; hop <= domain.MaxHops && len(want) > 0; hop++ {
		got, err := c.bindingsOf(ctx, want)
		if err != nil {
			return t, err
		}
		want = nil
		for x, list := range got {
			t.Bindings[x] = list
			for _, b := range list {
				if b.ToExchange {
					add(domain.ExchangeRef{Vhost: x.Vhost, Name: b.Destination})
				}
			}
			if ae := t.Alternates[x]; ae != "" {
				add(domain.ExchangeRef{Vhost: x.Vhost, Name: ae})
			}
		}
	}
	return t, nil
}

// bindingsOf returns the source bindings of xs, from the cache where
// fresh.
func (c *Client) bindingsOf(ctx context.Context, xs []domain.ExchangeRef) (map[domain.ExchangeRef][]domain.Binding, error) {
	now := time.Now()
	ttl := c.topologyReuse()
	out := make(map[domain.ExchangeRef][]domain.Binding, len(xs))
	missing := map[string][]domain.ExchangeRef{}
	c.mu.Lock()
	for _, x := range xs {
		if e, ok := c.topo.bindings[x]; ok && now.Sub(e.at) < ttl {
			out[x] = e.list
			continue
		}
		missing[x.Vhost] = append(missing[x.Vhost], x)
	}
	c.mu.Unlock()

	var mu sync.Mutex
	store := func(x domain.ExchangeRef, list []domain.Binding) {
		mu.Lock()
		out[x] = list
		mu.Unlock()
		c.mu.Lock()
		if c.topo.bindings == nil {
			c.topo.bindings = map[domain.ExchangeRef]bindingEntry{}
		}
		c.topo.bindings[x] = bindingEntry{at: now, list: list}
		c.mu.Unlock()
	}
	var jobs []func(context.Context) error
	for vhost, refs := range missing {
		if len(refs) > bulkBindings {
			jobs = append(jobs, func(ctx context.Context) error {
				var raw []rawBinding
				if err := c.get(ctx, "bindings/"+esc(vhost), nil, &raw); err != nil {
					return err
				}
				bySource := map[string][]domain.Binding{}
				for _, b := range raw {
					bySource[b.Source] = append(bySource[b.Source], b.binding())
				}
				for _, x := range refs {
					store(x, bySource[x.Name])
				}
				return nil
			})
			continue
		}
		for _, x := range refs {
			jobs = append(jobs, func(ctx context.Context) error {
				var raw []rawBinding
				path := "exchanges/" + esc(x.Vhost) + "/" + esc(x.Name) + "/bindings/source"
				if err := c.get(ctx, path, nil, &raw); err != nil {
					return err
				}
				list := make([]domain.Binding, 0, len(raw))
				for _, b := range raw {
					list = append(list, b.binding())
				}
				store(x, list)
				return nil
			})
		}
	}
	err := forEach(ctx, len(jobs), maxParallel, func(ctx context.Context, i int) error { return jobs[i](ctx) })
	return out, err
}

func (b rawBinding) binding() domain.Binding {
	return domain.Binding{Source: b.Source, Destination: b.Destination, ToExchange: b.DestinationType == "exchange",
		RoutingKey: b.RoutingKey, Arguments: map[string]any(b.Arguments)}
}

// applyPolicies fills the effective policy definition of queues that came
// from the cheap list (which names the policy but does not expand it).
func applyPolicies(queues []domain.Queue, sc *scopeEntry) {
	for i := range queues {
		q := &queues[i]
		if q.EffectiveDefinition == nil && q.Policy != "" {
			q.EffectiveDefinition = sc.policies[q.Vhost][q.Policy]
		}
		q.ResolveDeadLettering()
	}
}

// pickDLQ chooses q's DLQ among a route's targets: not q itself, then a
// name that extends q's (orders → orders.dlq), then one that says dead or
// dlq, then the first by name. The choice is deterministic.
func pickDLQ(q domain.Queue, targets []domain.QueueRef) *domain.QueueRef {
	var others []domain.QueueRef
	for _, t := range targets {
		if t != q.Ref() {
			others = append(others, t)
		}
	}
	if len(others) == 0 {
		return nil
	}
	for _, t := range others {
		if strings.HasPrefix(t.Name, q.Name) {
			return &t
		}
	}
	for _, t := range others {
		n := strings.ToLower(t.Name)
		if strings.Contains(n, "dlq") || strings.Contains(n, "dead") {
			return &t
		}
	}
	return &others[0]
}
