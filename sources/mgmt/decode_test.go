package mgmt

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

func TestDecodeQueuesKeepsOrderAcrossBlocks(t *testing.T) {
	n := 2*queueBlock + 7
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"q-%05d","vhost":"/","type":"classic","messages":%d,"messages_ready":%d,"arguments":{"x-max-length":%d}}`, i, i, i, i)
	}
	b.WriteString("]")
	queues, err := decodeQueues(strings.NewReader(b.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(queues) != n || cap(queues) != n {
		t.Fatalf("got %d queues (cap %d), want %d", len(queues), cap(queues), n)
	}
	for i, q := range queues {
		if q.Name != fmt.Sprintf("q-%05d", i) || q.Messages != int64(i) || q.Arguments["x-max-length"] != float64(i) {
			t.Fatalf("queue %d decoded as %+v", i, q)
		}
	}
}

// A field absent from one element must not keep the previous element's
// value: the decoder reuses one raw value.
func TestDecodeQueuesDoesNotCarryFieldsOver(t *testing.T) {
	in := `[{"name":"a","policy":"p","arguments":{"x-dead-letter-exchange":"dlx"},"members":["n1"],"messages":5},
	        {"name":"b"}]`
	queues, err := decodeQueues(strings.NewReader(in), false)
	if err != nil {
		t.Fatal(err)
	}
	b := queues[1]
	if b.Policy != "" || b.Arguments != nil || b.Members != nil || b.Messages != 0 || b.Type != "classic" {
		t.Fatalf("second queue inherited fields: %+v", b)
	}
	if queues[0].Policy != "p" || queues[0].Arguments["x-dead-letter-exchange"] != "dlx" {
		t.Fatalf("first queue: %+v", queues[0])
	}
}

// What a broker sends is kept readable rather than failing the whole
// list: bytes that are not UTF-8, a repeated key, and the [] that older
// brokers send for empty arguments.
func TestDecodeQueuesIsLenientWithBrokerQuirks(t *testing.T) {
	in := "[{\"name\":\"bad-\xff-name\",\"arguments\":[],\"messages\":1,\"messages\":2}]"
	queues, err := decodeQueues(strings.NewReader(in), false)
	if err != nil {
		t.Fatal(err)
	}
	q := queues[0]
	if q.Name != "bad-\uFFFD-name" {
		t.Errorf("name %q, want the bad byte replaced by U+FFFD", q.Name)
	}
	if q.Arguments != nil {
		t.Errorf("arguments %v, want none", q.Arguments)
	}
	if q.Messages != 2 {
		t.Errorf("messages %d, want the last value of the repeated key", q.Messages)
	}
}

func TestDecodeQueuesRejectsWhatIsNotAList(t *testing.T) {
	for name, in := range map[string]string{
		"object":    `{"error":"not_found"}`,
		"truncated": `[{"name":"a"},{"na`,
		"empty":     ``,
		"no end":    `[{"name":"a"}`,
		"bad type":  `[{"name":"a","messages":"many"}]`,
	} {
		if _, err := decodeQueues(strings.NewReader(in), false); err == nil {
			t.Errorf("%s: %q decoded without an error", name, in)
		}
	}
}

// What RabbitMQ 4.3's /api/queues/detailed gives for a delayed-retry
// quorum queue waiting out its delay, an at-least-once source holding
// dead letters its full DLQ refuses, a classic queue (none of the quorum
// figures), and a queue seconds old (its record only).
const queues43 = `[
{"arguments":{"x-delayed-retry-max":10000,"x-delayed-retry-min":2000,"x-delayed-retry-type":"all","x-queue-type":"quorum"},
 "consumers":0,"delayed_retry":"all (min: 2000ms, max: 10000ms)","delivery_limit":20,"durable":true,"effective_policy_definition":{},
 "leader":"rabbit43@localhost","members":["rabbit43@localhost"],"message_bytes_dlx":0,
 "message_stats":{"ack":0,"ack_details":{"rate":0.0},"publish":3,"publish_details":{"rate":0.0}},
 "messages":3,"messages_by_priority":{"4":3},"messages_delayed":3,"messages_dlx":0,"messages_ready":0,"messages_ready_returned":0,
 "messages_unacknowledged":0,"name":"delayed","node":"rabbit43@localhost","policy":null,"state":"running","type":"quorum","vhost":"v"},
{"arguments":{"x-dead-letter-exchange":"dlx","x-dead-letter-strategy":"at-least-once","x-overflow":"reject-publish","x-queue-type":"quorum"},
 "consumers":0,"delayed_retry":"disabled","durable":true,"effective_policy_definition":{},"message_bytes_dlx":9,
 "messages":3,"messages_by_priority":{},"messages_delayed":0,"messages_dlx":3,"messages_ready":0,"messages_ready_returned":0,
 "messages_unacknowledged":0,"name":"src","policy":null,"state":"running","type":"quorum","vhost":"v"},
{"arguments":{},"consumers":1,"durable":true,"messages":2,"messages_ready":2,"messages_unacknowledged":0,"name":"classic","type":"classic","vhost":"v"},
{"arguments":{"x-queue-type":"quorum"},"durable":true,"exclusive":false,"leader":"rabbit43@localhost","members":["rabbit43@localhost"],
 "name":"fresh","node":"rabbit43@localhost","state":"running","type":"quorum","vhost":"v"}
]`

func TestDecode43QueueFiguresAndLeavesWhatIsMissingUnknown(t *testing.T) {
	queues, err := decodeQueues(strings.NewReader(queues43), true)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]domain.Queue{}
	for _, q := range queues {
		byName[q.Name] = q
	}
	show := func(p *int64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	for _, tt := range []struct {
		name                                    string
		delayed, dlx, dlxBytes, returned, retry string
		priorities                              string
		hasRates, pending                       bool
	}{
		{"delayed", "3", "0", "0", "0", "all (min: 2000ms, max: 10000ms)", "map[4:3]", true, false},
		{"src", "0", "3", "9", "0", "disabled", "map[]", true, false},
		{"classic", "nil", "nil", "nil", "nil", "", "map[]", true, false},
		{"fresh", "nil", "nil", "nil", "nil", "", "map[]", false, true},
	} {
		q := byName[tt.name]
		got := fmt.Sprintf("%s/%s/%s/%s %q %v %v %v", show(q.Delayed), show(q.DLXHeld), show(q.DLXHeldBytes), show(q.ReadyReturned),
			q.DelayedRetry, q.ByPriority, q.HasRates, q.StatsPending)
		want := fmt.Sprintf("%s/%s/%s/%s %q %v %v %v", tt.delayed, tt.dlx, tt.dlxBytes, tt.returned, tt.retry, tt.priorities, tt.hasRates, tt.pending)
		if got != want {
			t.Errorf("%s: got %s, want %s", tt.name, got, want)
		}
	}
	if q := byName["classic"]; q.ByPriority != nil {
		t.Errorf("classic: messages_by_priority absent, decoded as %v instead of unknown", q.ByPriority)
	}
	if q := byName["fresh"]; q.Consumers != 0 || q.HasRates || q.Messages != 0 {
		t.Errorf("fresh: %+v", q)
	}
	// A queue seconds old, with the depth the cheap list gives, is not
	// judged on rates it does not have, and its visible row stays so.
	fresh := byName["fresh"]
	fresh.Messages, fresh.Ready = 2, 2
	if d := fresh.Drain(); d.Movement != domain.NoRates {
		t.Errorf("fresh: drain %+v, want rates unknown", d)
	}
	cheap := domain.Queue{Vhost: "v", Name: "fresh", Type: "quorum", Messages: 2, Ready: 2}
	if row := withStats(cheap, statsOf(byName["fresh"], time.Now())); row.HasRates || !row.StatsPending || row.Consumers != 0 {
		t.Errorf("fresh row with its pending statistics: %+v, want rates and consumers unknown", row)
	}
	if row := withStats(cheap, statsOf(byName["delayed"], time.Now())); !row.HasRates || row.Delayed == nil || *row.Delayed != 3 || row.DelayedRetry == "" {
		t.Errorf("row with statistics: %+v", row)
	}
	if d := byName["delayed"].Drain(); d.Movement != domain.Delayed {
		t.Errorf("delayed: drain %+v, want delayed (not empty)", d)
	}
}

// Queues with the same arguments share one decoded map, so 100 000 queues
// declared alike do not hold 100 000 maps; different arguments stay
// apart, and each queue reads its own.
func TestQueuesDeclaredAlikeShareTheirArguments(t *testing.T) {
	list := `[{"name":"a","vhost":"/","arguments":{"x-queue-type":"classic"},"effective_policy_definition":{}},
	{"name":"b","vhost":"/","arguments":{"x-queue-type":"classic"},"effective_policy_definition":{}},
	{"name":"c","vhost":"/","arguments":{"x-queue-type":"classic","x-dead-letter-exchange":"dlx"},"effective_policy_definition":{}}]`
	qs, err := decodeQueues(strings.NewReader(list), false)
	if err != nil {
		t.Fatal(err)
	}
	same := func(x, y map[string]any) bool {
		return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	}
	if !same(qs[0].Arguments, qs[1].Arguments) || !same(qs[0].EffectiveDefinition, qs[2].EffectiveDefinition) {
		t.Error("queues declared alike hold separate maps")
	}
	if same(qs[0].Arguments, qs[2].Arguments) {
		t.Fatal("queues with different arguments share a map")
	}
	if qs[2].StringSetting("dead-letter-exchange") != "dlx" || qs[0].StringSetting("dead-letter-exchange") != "" {
		t.Errorf("settings read %q and %q", qs[2].StringSetting("dead-letter-exchange"), qs[0].StringSetting("dead-letter-exchange"))
	}
}
