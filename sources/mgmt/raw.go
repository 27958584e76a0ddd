package mgmt

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/warrenops/warren/domain"
)

// The management API's JSON, decoded only as far as warren needs it.
// rabbit-hole's QueueInfo lacks head_message_timestamp and
// effective_policy_definition, and its ChannelInfo lacks the global
// prefetch and rates, so these shapes are our own.

// object is a JSON object that older brokers send as [] when empty.
type object map[string]any

func (o *object) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		*o = nil
		return nil
	}
	if m, ok := objects.get(b); ok {
		*o = m
		return nil
	}
	var m map[string]any
	if err := jsonv2.Unmarshal(b, &m, lenient); err != nil {
		return err
	}
	objects.put(b, m)
	*o = m
	return nil
}

// objects shares the decoded form of small JSON objects that repeat: most
// queues of a broker have the same arguments ({"x-queue-type":"classic"})
// and the same policy definition, and 100 000 queues would otherwise hold
// 200 000 small maps. What it hands out is never written to (a Queue's
// Arguments and EffectiveDefinition are read only).
var objects = &internTable{m: map[string]map[string]any{}}

// internTable is a bounded table of decoded objects by their JSON text:
// emptied when full, so text that never repeats costs little.
type internTable struct {
	mu sync.Mutex
	m  map[string]map[string]any
}

const (
	internMaxText    = 256
	internMaxEntries = 4096
)

func (t *internTable) get(b []byte) (map[string]any, bool) {
	if len(b) > internMaxText {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.m[string(b)]
	return m, ok
}

func (t *internTable) put(b []byte, m map[string]any) {
	if len(b) > internMaxText {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) >= internMaxEntries {
		clear(t.m)
	}
	t.m[string(b)] = m
}

// number is a JSON number that may be null, absent, "" or a string.
type number struct {
	V   float64
	Set bool
}

func (n *number) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil
	}
	if f, ok := domain.ToFloat(v); ok {
		n.V, n.Set = f, true
	}
	return nil
}

// count is the figure as a count, nil when the broker did not report it.
func (n number) count() *int64 {
	if !n.Set {
		return nil
	}
	v := int64(n.V)
	return &v
}

type rawSample struct {
	Sample    float64 `json:"sample"`
	Timestamp int64   `json:"timestamp"` // ms
}

type rawRate struct {
	Rate    float64     `json:"rate"`
	Samples []rawSample `json:"samples"`
}

type rawMsgStats struct {
	Publish      rawRate `json:"publish_details"`
	Ack          rawRate `json:"ack_details"`
	DeliverNoAck rawRate `json:"deliver_no_ack_details"`
	GetNoAck     rawRate `json:"get_no_ack_details"`
	Deliver      rawRate `json:"deliver_get_details"`
}

// drainRate is μ: acknowledgements plus deliveries that need none.
func (m *rawMsgStats) drainRate() float64 {
	if m == nil {
		return 0
	}
	return m.Ack.Rate + m.DeliverNoAck.Rate + m.GetNoAck.Rate
}

func (m *rawMsgStats) publishRate() float64 {
	if m == nil {
		return 0
	}
	return m.Publish.Rate
}

type rawChannelRef struct {
	Name           string `json:"name"`
	ConnectionName string `json:"connection_name"`
	User           string `json:"user"`
}

// channelRef tolerates the [] brokers send for the details of a channel
// or connection that is closing.
type channelRef rawChannelRef

func (c *channelRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		*c = channelRef{}
		return nil
	}
	return json.Unmarshal(b, (*rawChannelRef)(c))
}

type rawConsumer struct {
	Queue struct {
		Name  string `json:"name"`
		Vhost string `json:"vhost"`
	} `json:"queue"`
	Tag            string     `json:"consumer_tag"`
	Channel        channelRef `json:"channel_details"`
	AckRequired    bool       `json:"ack_required"`
	PrefetchCount  int        `json:"prefetch_count"`
	Active         *bool      `json:"active"`
	ActivityStatus string     `json:"activity_status"`
}

func (r rawConsumer) consumer(q domain.QueueRef) domain.Consumer {
	if r.Queue.Name != "" {
		q = domain.QueueRef{Vhost: r.Queue.Vhost, Name: r.Queue.Name}
	}
	active := r.Active == nil || *r.Active
	return domain.Consumer{Queue: q, Tag: r.Tag, Channel: r.Channel.Name, AckRequired: r.AckRequired,
		PrefetchCount: r.PrefetchCount, Active: active, ActivityStatus: r.ActivityStatus}
}

type rawQueue struct {
	Name                   string        `json:"name"`
	Vhost                  string        `json:"vhost"`
	Type                   string        `json:"type"`
	Durable                bool          `json:"durable"`
	Exclusive              *bool         `json:"exclusive"`
	State                  string        `json:"state"`
	Arguments              object        `json:"arguments"`
	Policy                 *string       `json:"policy"`
	EffectivePolicy        object        `json:"effective_policy_definition"`
	Node                   string        `json:"node"`
	Leader                 string        `json:"leader"`
	Members                []string      `json:"members"`
	Online                 []string      `json:"online"`
	Messages               int64         `json:"messages"`
	Ready                  int64         `json:"messages_ready"`
	Unacked                int64         `json:"messages_unacknowledged"`
	Consumers              *int          `json:"consumers"`
	HeadMessageTimestamp   number        `json:"head_message_timestamp"`
	MessagesDelayed        number        `json:"messages_delayed"`
	MessagesDLX            number        `json:"messages_dlx"`
	MessageBytesDLX        number        `json:"message_bytes_dlx"`
	MessagesReadyReturned  number        `json:"messages_ready_returned"`
	MessagesByPriority     object        `json:"messages_by_priority"`
	DelayedRetry           *string       `json:"delayed_retry"`
	MessageStats           *rawMsgStats  `json:"message_stats"`
	MessagesDetails        rawRate       `json:"messages_details"`
	MessagesReadyDetails   rawRate       `json:"messages_ready_details"`
	MessagesUnackedDetails rawRate       `json:"messages_unacknowledged_details"`
	ConsumerDetails        []rawConsumer `json:"consumer_details"`
}

// queue converts the raw form; withStats says whether rates and the head
// timestamp were asked for (a missing figure then means "none", not
// "not fetched").
func (r *rawQueue) queue(withStats bool) domain.Queue {
	q := domain.Queue{
		Vhost: r.Vhost, Name: r.Name, Type: r.Type, Durable: r.Durable,
		State:    r.State,
		Messages: r.Messages, Ready: r.Ready, Unacked: r.Unacked,
		Arguments: map[string]any(r.Arguments), Node: r.Node, Members: r.Members, Online: r.Online,
	}
	if r.Consumers != nil {
		q.Consumers = *r.Consumers
	}
	if r.Exclusive != nil {
		q.Exclusive = *r.Exclusive
	}
	if q.Type == "" {
		q.Type = "classic"
	}
	if r.Leader != "" {
		q.Node = r.Leader
	}
	if r.Policy != nil {
		q.Policy = *r.Policy
	}
	if r.EffectivePolicy != nil {
		q.EffectiveDefinition = map[string]any(r.EffectivePolicy)
	}
	if withStats && r.Consumers == nil {
		// RabbitMQ 4.x lists a queue whose statistics it has not
		// emitted yet (its first seconds) with its record only: no
		// policy, consumers or rates. Unknown, not none.
		q.StatsPending = true
		withStats = false
	}
	if withStats {
		q.HasRates = true
		q.PublishRate = r.MessageStats.publishRate()
		q.AckRate = r.MessageStats.drainRate()
		q.Delayed, q.DLXHeld = r.MessagesDelayed.count(), r.MessagesDLX.count()
		q.DLXHeldBytes, q.ReadyReturned = r.MessageBytesDLX.count(), r.MessagesReadyReturned.count()
		q.ByPriority = byPriority(r.MessagesByPriority)
		if r.DelayedRetry != nil {
			q.DelayedRetry = *r.DelayedRetry
		}
	}
	q.HeadMessageTimestamp, q.OldestUnknownReason = headTimestamp(q, r.HeadMessageTimestamp, withStats)
	return q
}

// byPriority reads messages_by_priority, {"4": 12, "0": 3}: nil when the
// broker sent none, empty when it sent {}. A key that is no priority is
// left out.
func byPriority(o object) map[int]int64 {
	if o == nil {
		return nil
	}
	out := make(map[int]int64, len(o))
	for k, v := range o {
		p, err := strconv.Atoi(k)
		n, ok := domain.ToFloat(v)
		if err == nil && ok {
			out[p] = int64(n)
		}
	}
	return out
}

// headTimestamp turns head_message_timestamp (seconds) into a time, or
// says why there is none (docs/ARCHITECTURE.md §4.1: never invent a figure).
func headTimestamp(q domain.Queue, ts number, fetched bool) (*time.Time, string) {
	switch {
	case q.Type == "quorum":
		return nil, "quorum queues report no head message timestamp"
	case q.Type == "stream":
		return nil, "streams report no head message timestamp"
	case q.Type != "classic":
		return nil, "this queue type reports no head message timestamp"
	case !fetched:
		return nil, "not fetched"
	case q.Ready == 0 && !ts.Set:
		return nil, "no ready message"
	case !ts.Set || ts.V <= 0:
		return nil, "the head message has no timestamp property (publishers did not set it)"
	}
	sec, frac := math.Modf(ts.V)
	t := time.Unix(int64(sec), int64(frac*1e9))
	return &t, ""
}

type rawPolicy struct {
	Vhost      string `json:"vhost"`
	Name       string `json:"name"`
	Pattern    string `json:"pattern"`
	ApplyTo    string `json:"apply-to"`
	Priority   int    `json:"priority"`
	Definition object `json:"definition"`
}

type rawExchange struct {
	Name      string `json:"name"`
	Vhost     string `json:"vhost"`
	Type      string `json:"type"`
	Arguments object `json:"arguments"`
}

type rawBinding struct {
	Source          string `json:"source"`
	Vhost           string `json:"vhost"`
	Destination     string `json:"destination"`
	DestinationType string `json:"destination_type"`
	RoutingKey      string `json:"routing_key"`
	Arguments       object `json:"arguments"`
}

type rawChannel struct {
	Name           string       `json:"name"`
	Number         int          `json:"number"`
	Vhost          string       `json:"vhost"`
	User           string       `json:"user"`
	PrefetchCount  int          `json:"prefetch_count"`
	GlobalPrefetch int          `json:"global_prefetch_count"`
	Unacked        int64        `json:"messages_unacknowledged"`
	Unconfirmed    int64        `json:"messages_unconfirmed"`
	Confirm        bool         `json:"confirm"`
	ConsumerCount  int          `json:"consumer_count"`
	IdleSince      *string      `json:"idle_since"`
	Connection     channelRef   `json:"connection_details"`
	MessageStats   *rawMsgStats `json:"message_stats"`
}

func (r rawChannel) channel() domain.Channel {
	ch := domain.Channel{Name: r.Name, Connection: r.Connection.Name, Vhost: r.Vhost, User: r.User,
		PrefetchCount: r.PrefetchCount, GlobalPrefetch: r.GlobalPrefetch, Unacked: r.Unacked,
		Unconfirmed: r.Unconfirmed, ConfirmMode: r.Confirm, Consumers: r.ConsumerCount}
	if m := r.MessageStats; m != nil {
		ch.AckRate = m.Ack.Rate
		ch.DeliverRate = m.Deliver.Rate
		ch.PublishRate = m.Publish.Rate
	}
	if r.IdleSince != nil {
		if t, ok := parseIdle(*r.IdleSince); ok {
			ch.IdleSince = &t
		}
	}
	return ch
}

// parseIdle reads idle_since, "2024-05-01 10:11:12" (3.x, UTC) or RFC 3339.
func parseIdle(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05.000-07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
