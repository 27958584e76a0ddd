package dlqfile

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
)

// Letter writes, straight from the letter, the line Message writes for
// FromLetter's message, and refuses what FromLetter refuses, in the same
// words.
func TestALetterIsWrittenAsItsMessageWouldBe(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 11, 12, 130000000, time.FixedZone("x", 3600))
	full := domain.Properties{ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 9, CorrelationID: "c",
		ReplyTo: "r", Expiration: "60000", MessageID: "m-1", Timestamp: at, Type: "t", UserID: "u", AppID: "a"}
	hostile := "E-\"2\"\\\n\t\x01<>&\u2028é\x1b[31m"
	letters := map[string]domain.DeadLetter{
		"every type": {LogicalID: "E-1", Group: "g", Reason: "rejected", OriginQueue: "orders", OriginExchange: "ex",
			RoutingKeys: []string{"orders", "other"}, Properties: full, Headers: everyType(), Body: []byte(`{"id":1}`)},
		"no headers, no body, no properties": {LogicalID: "E-2"},
		"empty headers":                      {LogicalID: "E-3", Headers: amqp.Table{}, Body: []byte{0, 0xff, 0xfe}},
		"hostile text": {LogicalID: hostile, Group: hostile, Reason: hostile, OriginQueue: hostile, RoutingKeys: []string{hostile},
			Properties: domain.Properties{MessageID: hostile, AppID: hostile},
			Headers:    amqp.Table{hostile: hostile, "x-death": []any{amqp.Table{"reason": hostile, "count": int64(3)}}}},
		"an envelope's letter keeps its envelope": {LogicalID: "E-4", Properties: full, Headers: amqp.Table{"inner": "h"}, Body: []byte("inner"),
			Raw: &domain.Enveloped{Properties: domain.Properties{ContentType: "text/plain", MessageID: "outer"}, Headers: amqp.Table{"outer": int32(1)}, Body: []byte("outer")}},
		"a large body": {LogicalID: "E-5", Body: bytes.Repeat([]byte("xyz"), 1<<20)},
		"every float and int": {LogicalID: "E-6", Headers: amqp.Table{"f32": float32(0.1), "f64": 1e300, "tiny": 1e-9, "neg": float32(-3.5e-7),
			"int": 7, "max": uint32(math.MaxUint32), "min": int64(math.MinInt64), "dec": amqp.Decimal{Scale: 255, Value: math.MinInt32}}},
		"a header name not UTF-8":        {LogicalID: "E-7", Headers: amqp.Table{"a\xff": "v"}},
		"a nested name not UTF-8":        {LogicalID: "E-8", Headers: amqp.Table{"x": amqp.Table{"b\xfe": int8(1)}}},
		"NaN in an array":                {LogicalID: "E-9", Headers: amqp.Table{"x": []any{int8(1), math.NaN()}}},
		"an infinite float32":            {LogicalID: "E-10", Headers: amqp.Table{"x": map[string]any{"y": float32(math.Inf(-1))}}},
		"a value of no AMQP type":        {LogicalID: "E-11", Headers: amqp.Table{"x": []any{struct{}{}}}},
		"a property not UTF-8":           {LogicalID: "E-12", Properties: domain.Properties{ReplyTo: "r\xff"}},
		"an envelope's property not UTF": {LogicalID: "E-13", Raw: &domain.Enveloped{Properties: domain.Properties{Type: "\xfe"}, Body: []byte("b")}},
	}
	for i := range 200 {
		m, h, body := distinct(i)
		letters[fmt.Sprint("distinct ", i)] = domain.DeadLetter{LogicalID: m.LogicalID, OriginQueue: m.OriginQueue, RoutingKeys: []string{m.RoutingKey},
			Properties: domain.Properties{MessageID: m.Properties.MessageID, Timestamp: at.Add(time.Duration(i) * time.Second)}, Headers: h, Body: body}
	}
	for name, d := range letters {
		want, werr := FromLetter(d)
		got, gerr := appendLetter(nil, d)
		switch {
		case werr != nil || gerr != nil:
			if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
				t.Errorf("%s: Letter refuses with %v, FromLetter with %v", name, gerr, werr)
			}
		case !bytes.Equal(got, appendMessage(nil, want)):
			t.Errorf("%s: Letter writes\n%.600s\nMessage writes\n%.600s", name, got, appendMessage(nil, want))
		}
	}
	// The encoder writes the line, and after a refusal the next line
	// whole.
	var out strings.Builder
	enc := NewEncoder(&out)
	if err := enc.Letter(letters["a header name not UTF-8"]); err == nil {
		t.Fatal("a header name not UTF-8 was written")
	}
	if err := enc.Letter(letters["every type"]); err != nil {
		t.Fatal(err)
	}
	m, _ := FromLetter(letters["every type"])
	if out.String() != string(appendMessage(nil, m)) {
		t.Errorf("the encoder wrote %q", out.String())
	}
}
