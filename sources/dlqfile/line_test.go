package dlqfile

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A line written by hand is the line encoding/json writes for the same
// message, so the reader reads every one as it was meant.
func TestALineIsWhatEncodingJSONWrites(t *testing.T) {
	ts := time.Unix(1700000000, 0).UTC()
	for _, m := range []Message{
		{LogicalID: "E-1", Headers: map[string]Value{}, Body: "", BodySHA256: Digest(nil)},
		{LogicalID: "E-\"2\"\\\n\t\x01<>&\u2028é\xff", Group: "g", Reason: "rejected", OriginQueue: "orders", Exchange: "x", RoutingKey: "k",
			Properties: Properties{ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 9, CorrelationID: "c",
				ReplyTo: "r", Expiration: "60000", MessageID: "m", Timestamp: &ts, Type: "t", UserID: "u", AppID: "a"},
			Body: "Ym9keQ==", BodySHA256: Digest([]byte("body"))},
	} {
		if m.Headers == nil || len(m.Headers) == 0 {
			h, err := EncodeTable(amqp.Table{"b": true, "i8": int8(-1), "u8": uint8(255), "i16": int16(-300), "u16": uint16(60000),
				"i32": int32(math.MinInt32), "u32": uint32(math.MaxUint32), "i64": int64(math.MaxInt64), "f32": float32(0.1), "f64": 1e300,
				"s": "a\"b\\c\n\u2029", "bad": "\xff", "t": ts, "tab": amqp.Table{"n": int32(1)}, "arr": []any{"x", nil}})
			if err != nil {
				t.Fatal(err)
			}
			m.Headers = h
		}
		var want bytes.Buffer
		e := json.NewEncoder(&want)
		e.SetEscapeHTML(false)
		if err := e.Encode(m); err != nil {
			t.Fatal(err)
		}
		got := appendMessage(nil, m)
		if string(got) != want.String() {
			t.Errorf("by hand:\n%s\nencoding/json:\n%s", got, want.String())
		}
	}
}
