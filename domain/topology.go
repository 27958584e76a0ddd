package domain

import (
	"sort"
	"strings"
)

// ExchangeRef names an exchange; Name "" is the default exchange.
type ExchangeRef struct {
	Vhost string
	Name  string
}

// Binding is one binding whose source is an exchange.
type Binding struct {
	Source      string
	Destination string
	ToExchange  bool // destination is an exchange, not a queue
	RoutingKey  string
	Arguments   map[string]any
}

// Topology is the part of the broker's routing that dead-lettering
// depends on: the exchanges of the vhosts read, and the source bindings
// of every dead-letter exchange (and of the exchanges those bind to).
type Topology struct {
	// Exchanges maps each exchange to its type (direct, fanout, ...).
	Exchanges map[ExchangeRef]string
	// Alternates maps an exchange to its alternate-exchange argument.
	Alternates map[ExchangeRef]string
	Bindings   map[ExchangeRef][]Binding
	// direct indexes the bindings of direct exchanges by routing key, so
	// pairing 10 000 queues with one shared dead-letter exchange does not
	// scan all its bindings once per queue; nil until IndexDirect.
	direct map[ExchangeRef]map[string][]Binding
}

// IndexDirect builds the routing-key index of direct exchanges' bindings.
// Call it once the bindings are complete and before the topology is
// shared: routing only reads it.
func (t *Topology) IndexDirect() {
	t.direct = make(map[ExchangeRef]map[string][]Binding)
	for x, list := range t.Bindings {
		if t.Exchanges[x] != "direct" {
			continue
		}
		byKey := make(map[string][]Binding, len(list))
		for _, b := range list {
			byKey[b.RoutingKey] = append(byKey[b.RoutingKey], b)
		}
		t.direct[x] = byKey
	}
}

// MaxHops bounds exchange-to-exchange routing (and alternate exchanges)
// followed when resolving where a dead letter goes.
const MaxHops = 4

// Indexed reports whether IndexDirect has run.
func (t *Topology) Indexed() bool { return t.direct != nil }

// Reach adds to out every queue a message published to x with key
// reaches, following exchange bindings and alternate exchanges.
func (t *Topology) Reach(x ExchangeRef, key string, out map[QueueRef]bool) {
	t.route(x, &key, nil, out, 0)
}

// Route is where dead letters of one queue go.
type Route struct {
	// Exchange is the dead-letter exchange; Missing says it does not exist.
	Exchange ExchangeRef
	Missing  bool
	// Targets are the queues a dead letter can reach.
	Targets []QueueRef
	// Exact is false when the targets depend on each message's original
	// routing key (no dead-letter routing key), so Targets are the queues
	// some key could reach rather than the ones every message reaches.
	Exact bool
}

// DeadLetterRoute resolves where q's dead letters go; ok is false when q
// has no dead-letter exchange or the route cannot be known (the default
// exchange with no dead-letter routing key). exists reports whether a
// queue exists, for the default exchange's implicit bindings.
func (t *Topology) DeadLetterRoute(q Queue, exists func(QueueRef) bool) (Route, bool) {
	if !q.HasDLX {
		return Route{}, false
	}
	r := Route{Exchange: ExchangeRef{Vhost: q.Vhost, Name: q.DeadLetterExchange}}
	var key *string
	if _, set := q.Setting("dead-letter-routing-key"); set {
		k := q.DeadLetterRoutingKey
		key = &k
	}
	r.Exact = key != nil
	if r.Exchange.Name == "" && key == nil {
		return r, false
	}
	if _, ok := t.Exchanges[r.Exchange]; !ok && r.Exchange.Name != "" {
		r.Missing = true
		return r, true
	}
	seen := map[QueueRef]bool{}
	t.route(r.Exchange, key, exists, seen, 0)
	for ref := range seen {
		r.Targets = append(r.Targets, ref)
	}
	sort.Slice(r.Targets, func(i, j int) bool { return r.Targets[i].Name < r.Targets[j].Name })
	return r, true
}

func (t *Topology) route(x ExchangeRef, key *string, exists func(QueueRef) bool, out map[QueueRef]bool, hops int) {
	if hops > MaxHops {
		return
	}
	if x.Name == "" {
		ref := QueueRef{Vhost: x.Vhost, Name: *key}
		if exists == nil || exists(ref) {
			out[ref] = true
		}
		return
	}
	kind := t.Exchanges[x]
	matched := false
	candidates := t.Bindings[x]
	if byKey, ok := t.direct[x]; ok && key != nil {
		candidates = byKey[*key]
	}
	for _, b := range candidates {
		if !bindingMatches(kind, b.RoutingKey, key) {
			continue
		}
		matched = true
		if b.ToExchange {
			t.route(ExchangeRef{Vhost: x.Vhost, Name: b.Destination}, key, exists, out, hops+1)
			continue
		}
		out[QueueRef{Vhost: x.Vhost, Name: b.Destination}] = true
	}
	if ae, ok := t.Alternates[x]; ok && ae != "" && !matched {
		t.route(ExchangeRef{Vhost: x.Vhost, Name: ae}, key, exists, out, hops+1)
	}
}

// bindingMatches reports whether a message with routing key (nil =
// unknown, any key) can follow a binding of an exchange of this kind.
// Headers and plugin exchanges are taken to match: their rule depends on
// the message, not on the key.
func bindingMatches(kind, bindingKey string, key *string) bool {
	if key == nil {
		return true
	}
	switch kind {
	case "direct":
		return bindingKey == *key
	case "topic":
		return TopicMatch(bindingKey, *key)
	}
	return true
}

// TopicMatch reports whether a topic exchange's binding pattern matches a
// routing key: words separated by dots, "*" one word, "#" zero or more.
func TopicMatch(pattern, key string) bool {
	return topicWords(strings.Split(pattern, "."), strings.Split(key, "."))
}

// topicWords matches word by word in O(len(p)·len(k)): dp[j] says
// whether the pattern so far matches the first j words of the key.
func topicWords(p, k []string) bool {
	dp := make([]bool, len(k)+1)
	dp[0] = true
	for _, w := range p {
		next := make([]bool, len(k)+1)
		for j := 0; j <= len(k); j++ {
			switch w {
			case "#":
				next[j] = dp[j] || (j > 0 && next[j-1])
			case "*":
				next[j] = j > 0 && dp[j-1]
			default:
				next[j] = j > 0 && dp[j-1] && k[j-1] == w
			}
		}
		dp = next
	}
	return dp[len(k)]
}
