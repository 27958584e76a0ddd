package mgmt

import (
	"fmt"
	"strings"
	"testing"
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
