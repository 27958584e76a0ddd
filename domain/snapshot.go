package domain

import (
	"slices"
	"strings"
	"time"
)

// Snapshot is one consistent-enough picture of the broker. Figures come
// from the management API's statistics, which lag by the broker's
// collect_statistics_interval; StatsAge says how old they are.
type Snapshot struct {
	TakenAt  time.Time
	Overview Overview
	Nodes    []Node
	Queues   []Queue
	// Channels and Consumers are filled only when asked for (they are
	// costly on large brokers); ChannelsNote says why they are missing.
	Channels     []Channel
	Consumers    []Consumer
	ChannelsNote string
	StatsAge     time.Duration
	// Topology holds the dead-letter exchanges the queues name and their
	// bindings: what DLQ pairing and Lint read.
	Topology Topology
	// Partial is set on a FirstPage snapshot: some queues only, no rates
	// or DLQ pairing. QueueTotal is then how many queues there are.
	Partial    bool
	QueueTotal int
	// FromMetrics is set on a FirstPage snapshot whose queues came from
	// the broker's Prometheus endpoint: names and depths only, no type,
	// node or arguments.
	FromMetrics bool
	// OnlyRows is set on a snapshot of the queues RatesFor named alone
	// (SnapshotOptions.OnlyRows): their depth, settings and statistics,
	// without DLQ pairing, parking marks or topology, which need the
	// list of every queue. Gone names those the broker answered 404 for:
	// deleted since the last list.
	OnlyRows bool
	Gone     []QueueRef
	// Vhosts are the broker's vhosts, sorted, when WithVhosts asked.
	Vhosts []string
}

// SnapshotOptions say how much of the broker a snapshot reads. The queue
// list is always the cheap one (depths, arguments, policy names); rates
// and head timestamps cost a request per queue, so they are fetched only
// for the rows on screen, or for all queues in one heavier request.
type SnapshotOptions struct {
	Vhost    string     // "" = all vhosts
	RatesFor []QueueRef // rates + head timestamp only for these (visible rows)
	AllRates bool       // rates + head timestamp for every queue (status command)
	// OnlyRows reads the RatesFor queues one by one instead of listing
	// every queue: what a dashboard that holds the list asks between two
	// reads of it, since on 10 000 queues the list costs the broker a
	// second and a queue 2 ms (docs/ARCHITECTURE.md §3.4).
	OnlyRows bool
	// WithVhosts names the broker's vhosts in the snapshot (one more
	// request of a few milliseconds): a dashboard that lists every vhost
	// in turn learns which there are.
	WithVhosts bool
	Channels   bool // channels and consumers too
	// DLQOverrides pin a queue's DLQ where config says so (docs/ARCHITECTURE.md §6).
	DLQOverrides []DLQOverride
}

// DLQOverride pins Queue's DLQ; an empty Vhost matches every vhost.
type DLQOverride struct {
	Vhost, Queue, DLQ string
}

// ParkingSuffix names a DLQ's parking queue when config names none:
// orders.dlq's is orders.dlq.quarantine.
const ParkingSuffix = ".quarantine"

// Overview is the broker-wide header.
type Overview struct {
	ClusterName       string
	RabbitMQVersion   string
	ManagementVersion string
	ErlangVersion     string
	StatsInterval     time.Duration // collect_statistics_interval
	// RatesMode is the management plugin's rates_mode (none, basic,
	// detailed); only detailed links publishing channels to exchanges.
	RatesMode   string
	Totals      Totals
	PublishRate float64
	AckRate     float64
	// RatesUnknown is set on the overview of a first page, read without
	// statistics: no rates, channel or consumer counts yet.
	RatesUnknown bool
	// Node is the node that answered; object counts are cluster-wide.
	Node string
	// Via is the management API that answered when it is not the one
	// the config names first, First, but a fallback node's; Missed is
	// why First did not answer when it was last tried, at MissedAt.
	Via, First, Missed                         string
	MissedAt                                   time.Time
	QueueCount, ConsumerCount, ConnectionCount int
	ChannelCount, ExchangeCount                int
}

// Totals are the broker-wide queue totals.
type Totals struct {
	Messages, Ready, Unacked int64
}

// Node is one cluster member with its alarms.
type Node struct {
	Name       string
	Running    bool
	MemUsed    int64
	MemLimit   int64
	MemAlarm   bool
	DiskFree   int64
	DiskLimit  int64
	DiskAlarm  bool
	Partitions []string
}

// QueueRef names a queue.
type QueueRef struct {
	Vhost string
	Name  string
}

// Queue is one queue with the figures of docs/ARCHITECTURE.md §4.1.
type Queue struct {
	Vhost    string
	Name     string
	Type     string // classic | quorum | stream
	State    string // running, down, ...; "" when the API did not say
	Messages int64
	Ready    int64
	Unacked  int64
	// Consumers is known only with rates (HasRates): the cheap queue
	// list does not carry it.
	Consumers int
	// HeadMessageTimestamp is the timestamp property of the head message
	// (classic queues, publisher-set only); nil when unknown.
	HeadMessageTimestamp *time.Time
	// OldestUnknownReason explains a nil HeadMessageTimestamp.
	OldestUnknownReason string
	PublishRate         float64 // λ, messages/s
	AckRate             float64 // μ, ack or deliver-get (auto-ack) per s
	Arguments           map[string]any
	Policy              string
	EffectiveDefinition map[string]any // policy definition applied
	Node                string         // leader (quorum) or home node
	Members             []string       // quorum members
	// Online are the members the broker reports running (quorum queues,
	// in the API's "online"); nil when it does not say.
	Online []string
	// DLX settings resolved from arguments, then policy.
	DeadLetterExchange   string
	DeadLetterRoutingKey string
	// DLQ is the paired dead-letter queue, nil when none was found;
	// DLQSource says how it was paired (PairedByDLX, …).
	DLQ       *QueueRef
	DLQSource string
	// RetryTarget is set on the waiting queue of a retry loop: its
	// messages expire back into this queue, which is not its DLQ.
	RetryTarget *QueueRef
	// DLQOf lists the queues whose DLQ this queue is; PairedBy says how
	// the first of them was paired with it.
	DLQOf    []QueueRef
	PairedBy string
	// DLQMessages mirrors the paired DLQ's depth for the overview.
	DLQMessages int64
	// Delayed and DLXHeld are quorum figures (docs/ARCHITECTURE.md §4.1):
	// messages waiting out a delayed retry (RabbitMQ 4.3; not in Ready),
	// and at-least-once dead letters the queue still holds (reported for
	// such queues from 3.10, for every quorum queue on 4.3); both are in
	// Messages. nil when the broker does not report them (older brokers,
	// other queue types, or without statistics): unknown, never 0.
	Delayed, DLXHeld *int64
	// DLXHeldBytes is message_bytes_dlx, the size of DLXHeld; nil when
	// unknown.
	DLXHeldBytes *int64
	// ReadyReturned is messages_ready_returned (4.3 quorum): how many of
	// the ready messages were returned at least once; nil when unknown.
	ReadyReturned *int64
	// ByPriority is messages_by_priority (4.3 quorum): messages per
	// priority, nil when unknown.
	ByPriority map[int]int64
	// DelayedRetry is the delayed-retry setting as a 4.3 broker words it
	// (delayed_retry: "all (min: 2000ms, max: 10000ms)", "disabled");
	// "" when it does not say. DelayedRetrySetting reads the arguments
	// and policy keys too.
	DelayedRetry string
	// The flags sit together at the end, so the struct, of which a
	// large broker's dashboard holds 200 000 at times, has no padding
	// between them.
	Durable   bool
	Exclusive bool
	HasRates  bool // false when stats were not fetched
	HasDLX    bool // a dead-letter exchange is set, by argument or policy
	// StatsPending is set on a row read with statistics that the broker
	// listed without them (a queue seconds old): its consumers and rates
	// are unknown; its policy comes from the cheap list.
	StatsPending bool
	// ErrorQueue is set on a queue named as a framework names its error
	// queues (orders_error, error, EasyNetQ_Default_Error_Queue): it is
	// judged as a DLQ even before it is paired (docs/ARCHITECTURE.md §4.12).
	ErrorQueue bool
	// Parking is set on a parking queue: it holds messages quarantined
	// from a DLQ, kept out of replays until released (docs/ARCHITECTURE.md §4.4).
	Parking bool
}

// KeepPairing gives q the pairing old had: what a snapshot of a few rows
// (SnapshotOptions.OnlyRows) does not read, since pairing needs the list
// of every queue.
func (q *Queue) KeepPairing(old Queue) {
	q.DLQ, q.DLQSource, q.DLQOf, q.PairedBy = old.DLQ, old.DLQSource, old.DLQOf, old.PairedBy
	q.RetryTarget, q.DLQMessages, q.Parking, q.ErrorQueue = old.RetryTarget, old.DLQMessages, old.Parking, old.ErrorQueue
}

// IsDLQ reports whether some queue dead-letters into this one.
func (q Queue) IsDLQ() bool { return len(q.DLQOf) > 0 || q.ErrorQueue }

// Ref returns the queue's reference.
func (q Queue) Ref() QueueRef { return QueueRef{Vhost: q.Vhost, Name: q.Name} }

// Channel is one AMQP channel with its delivery and confirm state.
type Channel struct {
	Name           string
	Connection     string
	Vhost          string
	User           string
	PrefetchCount  int
	GlobalPrefetch int
	Unacked        int64
	Unconfirmed    int64
	ConfirmMode    bool
	Consumers      int
	AckRate        float64
	DeliverRate    float64
	PublishRate    float64
	IdleSince      *time.Time
}

// Consumer is one consumer on a queue.
type Consumer struct {
	Queue          QueueRef
	Tag            string
	Channel        string
	AckRequired    bool
	PrefetchCount  int
	Active         bool
	ActivityStatus string
}

// OriginDeliveryLimits maps each queue that dead-letters into ref to its
// delivery limit, for those that have one: a dead letter from such a
// queue was delivered limit+1 times, which its x-death does not say.
func (s *Snapshot) OriginDeliveryLimits(ref QueueRef) map[string]int64 {
	out := map[string]int64{}
	q := s.Queue(ref)
	if q == nil {
		return out
	}
	version := s.Overview.RabbitMQVersion
	for _, o := range q.DLQOf {
		if origin := s.Queue(o); origin != nil {
			if limit := origin.DeliveryLimit(version); limit >= 0 {
				out[o.Name] = limit
			}
		}
	}
	return out
}

// MembersDown are the quorum members the broker does not report online,
// or that sit on one of nodesDown (the node list is read live, a queue's
// online members come with its statistics and lag), in the order of
// Members; nil when the broker does not say which are online.
func (q Queue) MembersDown(nodesDown ...string) []string {
	if q.Online == nil {
		return nil
	}
	down := []string{}
	for _, m := range q.Members {
		if !slices.Contains(q.Online, m) || slices.Contains(nodesDown, m) {
			down = append(down, m)
		}
	}
	return down
}

// NodesRunning counts the nodes that run, and names those that do not.
func NodesRunning(nodes []Node) (running int, down []string) {
	for _, n := range nodes {
		if n.Running {
			running++
		} else {
			down = append(down, n.Name)
		}
	}
	return running, down
}

// Sources are the queues whose dead letters end up in ref: the queues
// that dead-letter into it, or, for a DLQ's default parking queue, into
// that DLQ.
func (s *Snapshot) Sources(ref QueueRef) []QueueRef {
	q := s.Queue(ref)
	if q == nil {
		return nil
	}
	if base, ok := strings.CutSuffix(q.Name, ParkingSuffix); ok && q.Parking && !q.IsDLQ() {
		if d := s.Queue(QueueRef{Vhost: q.Vhost, Name: base}); d != nil {
			return d.DLQOf
		}
	}
	return q.DLQOf
}

// Queue returns the snapshot's queue, or nil.
func (s *Snapshot) Queue(ref QueueRef) *Queue {
	for i := range s.Queues {
		if s.Queues[i].Ref() == ref {
			return &s.Queues[i]
		}
	}
	return nil
}
