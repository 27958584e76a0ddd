// Package actions is warren's write side: it plans replays and quarantines
// of dead letters (a dry run that changes nothing) and executes them with
// the protocol of docs/ARCHITECTURE.md §4.4 — write-ahead audit, a pipelined
// confirm-mode publisher, source deliveries acked only once their copy was
// confirmed and routed, an outcome for every message.
package actions

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/warrenops/warren/domain"
)

// Actions an operation can be.
const (
	ActionReplay     = "replay"
	ActionQuarantine = "quarantine"
	// ActionImport publishes the messages of an export file, exactly as
	// they were delivered (docs/ARCHITECTURE.md §4.14).
	ActionImport = "import"
)

// Destination is where a message is published.
type Destination struct {
	Exchange   string // "" is the default exchange
	RoutingKey string
}

// String is the destination as the prompt names it.
func (d Destination) String() string {
	if d.Exchange == "" {
		return fmt.Sprintf("queue %s (default exchange)", d.RoutingKey)
	}
	return fmt.Sprintf("exchange %s (routing key %s)", d.Exchange, d.RoutingKey)
}

// Target is the destination as the audit log records it: "queue:NAME" for
// the default exchange, "exchange:NAME/ROUTING_KEY" otherwise.
func (d Destination) Target() string {
	if d.Exchange == "" {
		return "queue:" + d.RoutingKey
	}
	return "exchange:" + d.Exchange + "/" + d.RoutingKey
}

// Override is an operator's --to EXCHANGE[/ROUTING_KEY].
type Override struct {
	Exchange string
	// RoutingKey is used when KeepKey is false; with KeepKey each message
	// keeps its original routing key (the first of its x-death routing keys).
	RoutingKey string
	KeepKey    bool
}

// String is the override as the operator wrote it, which ParseOverride
// reads back.
func (o Override) String() string {
	if o.KeepKey {
		return o.Exchange
	}
	return o.Exchange + "/" + o.RoutingKey
}

// Words is the override as a sentence names it: the queue, or the
// exchange and the routing key its messages go with.
func (o Override) Words() string {
	if o.KeepKey {
		return "exchange " + o.Exchange + " (each message's original routing key)"
	}
	return Destination{Exchange: o.Exchange, RoutingKey: o.RoutingKey}.String()
}

// ParseOverride reads EXCHANGE[/ROUTING_KEY]. The first "/" splits, so an
// exchange name cannot contain one but a routing key can; "/KEY" is the
// default exchange, i.e. the queue named KEY.
func ParseOverride(s string) (Override, error) {
	ex, key, hasKey := strings.Cut(s, "/")
	switch {
	case s == "":
		return Override{}, errors.New("--to needs EXCHANGE or EXCHANGE/ROUTING_KEY")
	case ex == "" && key == "":
		return Override{}, errors.New("--to /: name a queue after the slash for the default exchange")
	case ex == "amq.default":
		ex = ""
	}
	if ex == "" && !hasKey {
		return Override{}, errors.New("--to: the default exchange needs a queue name as routing key (/QUEUE)")
	}
	return Override{Exchange: ex, RoutingKey: key, KeepKey: !hasKey}, nil
}

// Matcher selects dead letters; dlq's compiled filters are one. applied is
// nil when the inbox does not know.
type Matcher interface {
	Match(d domain.DeadLetter, applied *bool, now time.Time) (bool, error)
}

// Request is everything a plan is computed from. It is plain data, so
// Plan is a pure function and a dry run is exactly what would happen.
type Request struct {
	Action string
	Vhost  string
	Queue  string // the queue the letters are held from
	// Letters are the dead letters the browse session holds.
	Letters []domain.DeadLetter
	Filter  Matcher // nil selects every letter
	// FilterText is the filter as the operator wrote it, for the audit log.
	FilterText string
	// Applied holds the logical IDs the inbox reports applied; it is
	// consulted only when InboxKnown.
	Applied        map[string]bool
	InboxKnown     bool
	IncludeApplied bool
	// Release says Queue is a parking queue: replaying from it releases
	// quarantined messages, which bulk replays otherwise leave alone.
	Release bool
	To      *Override
	// Parking is the quarantine queue (Action quarantine).
	Parking string
	Reason  string
	Rate    float64 // messages per second; 0 is unlimited
	Now     time.Time
	// Origins confirms the origins framework headers name, which a
	// publisher controls (docs/ARCHITECTURE.md §4.12); the zero value
	// confirms none.
	Origins Origins
}

// Origins say which of the origins named by framework headers the DLQ's
// pairing confirms: queues that dead-letter into it or pair with it by
// a framework's naming (or the config), and routes — an exchange and a
// routing key — that reach such a queue.
type Origins struct {
	// Known says the pairing was read: a letter the broker dead-lettered
	// then goes back only to a confirmed queue too, since a publisher
	// can write x-death itself (before 3.13, x-last-death-*) straight
	// into a DLQ. Without it only framework letters are checked.
	Known  bool
	Queues map[string]bool
	// Exists reports whether a queue exists; nil knows none. A broker
	// letter whose origin queue is gone is planned to it all the same,
	// so the destination check refuses the operation naming it.
	Exists func(queue string) bool
	// Route reports whether exchange routes key to a confirmed queue;
	// nil confirms no route.
	Route func(exchange, key string) bool
}

// confirms reports whether the origin may be published to.
func (o Origins) confirms(exchange, key string) bool {
	if exchange == "" {
		return o.Queues[key]
	}
	return o.Route != nil && o.Route(exchange, key)
}

// Item is one message the operation will publish.
type Item struct {
	Letter domain.DeadLetter
	Dest   Destination
	// Edit, for an edit, is what the copy carries instead of the
	// letter's body and application headers.
	Edit *Edited
}

// Group counts the items bound for one destination.
type Group struct {
	Dest  Destination
	Count int
	Bytes int64
}

// Plan says exactly what an operation will do.
type Plan struct {
	Action     string
	Vhost      string
	Queue      string
	FilterText string
	Parking    string
	Reason     string
	Rate       float64
	Release    bool
	// KeepKey is a --to EXCHANGE with each message's original routing
	// key, where NoDestination counts the messages without one.
	KeepKey bool

	Items  []Item
	Groups []Group // by count, largest first
	Bytes  int64
	// LogicalIDs is how many distinct logical IDs the items carry; fewer
	// than the items when some share one, and the prompt says so.
	LogicalIDs int
	// Skipped letters stay where they are.
	SkippedApplied     []domain.DeadLetter
	SkippedQuarantined int
	NoDestination      int // no origin queue in x-death and no --to; no original key with KeepKey
	// Unconfirmed are letters whose framework headers name an origin
	// the DLQ's pairing does not confirm; they stay unless --to.
	Unconfirmed  int
	InboxUnknown bool
	// FilterErrors counts letters the filter could not be evaluated on,
	// left out; FilterError is the first such error.
	FilterErrors int
	FilterError  error
}

// Selected is how many messages the operation will publish.
func (p *Plan) Selected() int { return len(p.Items) }

// NewPlan computes what req would do, touching nothing.
func NewPlan(req Request) (*Plan, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	p := &Plan{
		Action: req.Action, Vhost: req.Vhost, Queue: req.Queue, FilterText: req.FilterText,
		Parking: req.Parking, Reason: req.Reason, Rate: req.Rate, Release: req.Release,
		InboxUnknown: !req.InboxKnown, KeepKey: req.To != nil && req.To.KeepKey,
	}
	groups := map[Destination]*Group{}
	ids := map[string]struct{}{}
	for _, d := range req.Letters {
		dest, skip, err := req.Decide(d, appliedOf(req, d))
		switch skip {
		case SkipFilterError:
			p.FilterErrors++
			if p.FilterError == nil {
				p.FilterError = err
			}
			continue
		case SkipFiltered:
			continue
		case SkipQuarantined:
			p.SkippedQuarantined++
			continue
		case SkipApplied:
			p.SkippedApplied = append(p.SkippedApplied, d)
			continue
		case SkipNoDestination:
			p.NoDestination++
			continue
		case SkipUnconfirmed:
			p.Unconfirmed++
			continue
		}
		p.Items = append(p.Items, Item{Letter: d, Dest: dest})
		ids[d.LogicalID] = struct{}{}
		size := int64(len(d.Body))
		p.Bytes += size
		g := groups[dest]
		if g == nil {
			g = &Group{Dest: dest}
			groups[dest] = g
		}
		g.Count++
		g.Bytes += size
	}
	p.LogicalIDs = len(ids)
	for _, g := range groups {
		p.Groups = append(p.Groups, *g)
	}
	sort.Slice(p.Groups, func(i, j int) bool {
		a, b := p.Groups[i], p.Groups[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Dest.Target() < b.Dest.Target()
	})
	return p, nil
}

// Validate checks what the request asks before any letter is decided; a
// refusal is a *RequestError.
func (req Request) Validate() error {
	switch {
	case req.Action != ActionReplay && req.Action != ActionQuarantine && req.Action != ActionImport:
		return &RequestError{fmt.Errorf("unknown action %q", req.Action)}
	case req.Action == ActionImport && req.To == nil:
		return &RequestError{errors.New("an import needs a destination: --to QUEUE, or --exchange X with --routing-key K or --original-routing-key")}
	case req.Action == ActionQuarantine && strings.TrimSpace(req.Reason) == "":
		return &RequestError{errors.New("a quarantine needs a reason (--reason)")}
	case req.Action == ActionQuarantine && strings.ContainsFunc(req.Reason, unicode.IsControl):
		// It goes into every copy's headers, which other tools print
		// as they are: as the operator's name, it holds no escape.
		return &RequestError{fmt.Errorf("the quarantine's reason %s holds a control character (a newline, an escape, a tab): say it on one line of plain text", strconv.Quote(req.Reason))}
	case req.Action == ActionQuarantine && (req.Parking == "" || req.Parking == req.Queue):
		return &RequestError{fmt.Errorf("quarantine of %s needs a parking queue other than itself", req.Queue)}
	case req.Rate < 0:
		return &RequestError{fmt.Errorf("--rate must not be negative, got %g", req.Rate)}
	}
	return nil
}

// RequestError is a request an operation refuses as it was asked: the
// operator's to correct, not the broker's.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// Skip says why a letter is left where it is.
type Skip int

// Why a letter stays.
const (
	Selected          Skip = iota // not skipped: it moves
	SkipFilterError               // the filter could not judge it
	SkipFiltered                  // the filter said no
	SkipQuarantined               // quarantined, and this is no release
	SkipApplied                   // the inbox applied it, and this is a replay
	SkipNoDestination             // no origin queue and no --to, or --to EXCHANGE and no original routing key
	SkipUnconfirmed               // an origin from headers the pairing does not confirm, and no --to
)

// Decide is the request's word on one letter: where it goes, or why it
// stays. applied is the inbox's word (nil when unknown). A plan and a
// walk decide every letter with it.
func (req Request) Decide(d domain.DeadLetter, applied *bool) (Destination, Skip, error) {
	if req.Filter != nil {
		// A message the filter cannot judge (a field it compares is
		// unknown) is not selected: an action needs a yes.
		ok, err := req.Filter.Match(d, applied, req.Now)
		if err != nil {
			return Destination{}, SkipFilterError, err
		}
		if !ok {
			return Destination{}, SkipFiltered, nil
		}
	}
	if d.Quarantined && req.Action == ActionReplay && !req.Release {
		return Destination{}, SkipQuarantined, nil
	}
	// Only a replay can apply an effect twice; parking an applied message
	// harms nothing.
	if applied != nil && *applied && !req.IncludeApplied && req.Action == ActionReplay {
		return Destination{}, SkipApplied, nil
	}
	dest, skip := destinationOf(req, d)
	return dest, skip, nil
}

// appliedOf is the inbox's word on d: nil when unknown, which includes a
// logical ID that is only a content hash, since no inbox holds those.
func appliedOf(req Request, d domain.DeadLetter) *bool {
	if !req.InboxKnown || d.BusinessID() == "" {
		return nil
	}
	v := req.Applied[d.LogicalID]
	return &v
}

func destinationOf(req Request, d domain.DeadLetter) (Destination, Skip) {
	if req.Action == ActionQuarantine {
		return Destination{RoutingKey: req.Parking}, Selected
	}
	if o := req.To; o != nil {
		key := o.RoutingKey
		if o.KeepKey {
			// A message no record gives a routing key stays: the empty
			// key would route it by the exchange's type, not by where
			// it was going.
			var known bool
			if key, known = originalKey(d); !known {
				return Destination{}, SkipNoDestination
			}
		}
		return Destination{Exchange: o.Exchange, RoutingKey: key}, Selected
	}
	if c := d.Failure.Convention; c != "" && c != domain.ConventionBroker {
		return frameworkDestination(req, d.Failure)
	}
	// Back to the queue that failed it, and only that one: its exchange
	// would also deliver to every other bound queue, which processed the
	// message already. A letter that died in the queue it is held from
	// has no origin to go back to.
	if d.OriginQueue == "" || d.OriginQueue == req.Queue {
		return Destination{}, SkipNoDestination
	}
	if o := req.Origins; o.Known && !o.Queues[d.OriginQueue] && (o.Exists == nil || o.Exists(d.OriginQueue)) {
		return Destination{}, SkipUnconfirmed
	}
	return Destination{RoutingKey: d.OriginQueue}, Selected
}

// frameworkDestination is where a framework's error-queue letter goes
// back to: the origin queue its convention names, else the original
// exchange with the original routing key — each only where the DLQ's
// pairing confirms it, since a publisher wrote those headers.
func frameworkDestination(req Request, f domain.Failure) (Destination, Skip) {
	if q := f.OriginQueue; q != "" && q != req.Queue && req.Origins.confirms("", q) {
		return Destination{RoutingKey: q}, Selected
	}
	x, key := f.OriginExchange, f.OriginRoutingKey
	if (x != "" || key != "") && !(x == "" && key == req.Queue) && req.Origins.confirms(x, key) {
		return Destination{Exchange: x, RoutingKey: key}, Selected
	}
	if f.Origin() == "" {
		return Destination{}, SkipNoDestination
	}
	return Destination{}, SkipUnconfirmed
}

func originalKey(d domain.DeadLetter) (string, bool) {
	if k := d.Failure.OriginRoutingKey; k != "" && d.Failure.Convention != domain.ConventionBroker {
		return k, true
	}
	if len(d.RoutingKeys) > 0 {
		return d.RoutingKeys[0], true
	}
	for _, x := range d.Deaths {
		if len(x.RoutingKeys) > 0 {
			return x.RoutingKeys[0], true
		}
	}
	return "", false
}
