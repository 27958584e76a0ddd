package dlq

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// fieldGen turns fuzz bytes into AMQP field values of every type the
// decoder produces, nested tables and arrays included, so the fuzzer
// explores header shapes rather than byte strings.
type fieldGen struct{ b []byte }

func (g *fieldGen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *fieldGen) bytes() []byte {
	n := int(g.byte() % 24)
	n = min(n, len(g.b))
	out := g.b[:n]
	g.b = g.b[n:]
	return out
}

func (g *fieldGen) u64() uint64 {
	var buf [8]byte
	copy(buf[:], g.bytes())
	return binary.LittleEndian.Uint64(buf[:])
}

// name picks keys the code looks at, so the fuzzer reaches them often.
func (g *fieldGen) name() string {
	names := []string{"x-death", "queue", "reason", "count", "time", "exchange", "routing-keys",
		"original-expiration", "x-first-death-queue", "x-last-death-queue", "x-last-death-reason",
		"x-delivery-count", "x-warren-replay-count", "x-warren-quarantine-reason", "x-retry-count", "event_id", "x-stream-offset"}
	c := g.byte()
	if int(c) < len(names)*8 {
		return names[int(c)%len(names)]
	}
	return string(g.bytes())
}

func (g *fieldGen) value(depth int) any {
	switch g.byte() % 18 {
	case 0:
		return nil
	case 1:
		return g.byte()&1 == 1
	case 2:
		return int8(g.byte())
	case 3:
		return int16(g.u64())
	case 4:
		return int32(g.u64())
	case 5:
		return int64(g.u64())
	case 6:
		return uint8(g.byte())
	case 7:
		return uint16(g.u64())
	case 8:
		return uint32(g.u64())
	case 9:
		return math.Float32frombits(uint32(g.u64()))
	case 10:
		return math.Float64frombits(g.u64())
	case 11:
		return amqp.Decimal{Scale: g.byte(), Value: int32(g.u64())}
	case 12:
		return time.Unix(int64(g.u64()), 0)
	case 13:
		return g.bytes()
	case 14, 15:
		return string(g.bytes())
	case 16:
		if depth > 4 {
			return nil
		}
		return g.table(depth + 1)
	default:
		if depth > 4 {
			return nil
		}
		n := int(g.byte() % 5)
		arr := make([]any, n)
		for i := range arr {
			arr[i] = g.value(depth + 1)
		}
		return arr
	}
}

func (g *fieldGen) table(depth int) amqp.Table {
	n := int(g.byte() % 6)
	t := amqp.Table{}
	for range n {
		t[g.name()] = g.value(depth)
	}
	return t
}

func FuzzParseDeaths(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 17, 3, 16, 4, 1, 14, 3, 'o', 'r', 'd', 3, 5, 8, 3, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("\x00\x11\x02\x10\x03\x01\x0e\x02ab\x02\x0e\x08rejected\x03\x0a\x08\xff\xff\xff\xff\xff\xff\xef\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fieldGen{b: data}
		h := g.table(0)
		deaths := ParseDeaths(h)
		for _, d := range deaths {
			if d.Count < 1 {
				t.Fatalf("death with count %d", d.Count)
			}
		}
		org := findOrigin(deaths, h)
		if n := Attempts(deaths, org.Queue, h, "x-retry-count"); n < 0 {
			t.Fatalf("negative attempts %d", n)
		}
	})
}

func FuzzLogicalID(f *testing.F) {
	f.Add("json:event.id", "", []byte(`{"event":{"id":"E-1"}}`), []byte{})
	f.Add("json:$.items[3].sku", "m", []byte(`{"items":[1,2,{"a":[]},{"sku":7}]}`), []byte{})
	f.Add("header:event_id", "m", []byte("body"), []byte{15, 5, 14, 3, 'E', '-', '1'})
	f.Add("message_id", "", []byte{0xff}, []byte{})
	f.Fuzz(func(t *testing.T, spec, msgID string, body, headerData []byte) {
		g := &fieldGen{b: headerData}
		h := g.table(0)
		id, from := LogicalID(spec, msgID, h, body)
		if id == "" {
			t.Fatal("empty logical ID")
		}
		if len(id) > maxLogicalID && from != domain.IDHash {
			t.Fatalf("logical ID of %d bytes from %s", len(id), from)
		}
		if from == domain.IDHash && !strings.HasPrefix(id, "sha256:") {
			t.Fatalf("hash ID not marked: %q", id)
		}
	})
}

func FuzzDecodeHeaders(f *testing.F) {
	f.Add([]byte{}, []byte("{}"))
	f.Add([]byte{6, 0, 17, 3, 16, 3, 1, 14, 3, 'q', '-', '1', 3, 11, 2, 1, 0, 0, 0}, []byte(`{"id":1}`))
	f.Fuzz(func(t *testing.T, headerData, body []byte) {
		g := &fieldGen{b: headerData}
		d := amqp.Delivery{Headers: g.table(0), Body: body, MessageId: "m"}
		dl := Decode(d, Options{LogicalID: "header:event_id", AttemptsHeader: "x-retry-count"}, true)
		size := len(body)
		if dl.Raw != nil {
			size = len(dl.Body) // an envelope's message is what is shown
		}
		if dl.Attempts < 0 || dl.Size != size {
			t.Fatalf("attempts %d size %d", dl.Attempts, dl.Size)
		}
		if _, err := json.Marshal(domain.PlainHeaders(d.Headers)); err != nil {
			t.Fatalf("plain headers do not marshal: %v", err)
		}
	})
}

func FuzzFilter(f *testing.F) {
	f.Add(`reason == "rejected" && attempts >= 3 && applied == false`, []byte{})
	f.Add(`header("x-retry-count") > 2 || age_seconds < 60`, []byte{15, 13, 5, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add(`logical_id matches "^(a+)+$"`, []byte{})
	f.Add(`len(header("x-death")) > 0`, []byte{})
	f.Fuzz(func(t *testing.T, src string, headerData []byte) {
		flt, err := domain.CompileFilter(src)
		if err != nil {
			return
		}
		g := &fieldGen{b: headerData}
		applied := len(headerData)%2 == 0
		dl := domain.DeadLetter{LogicalID: "aaaa", Headers: g.table(0), DeadLetteredAt: t0}
		_, _ = flt.Match(dl, &applied, t0.Add(time.Minute))
		_, _ = flt.Match(domain.DeadLetter{}, nil, t0)
	})
}

// FuzzRecognize feeds the conventions hostile values in the places their
// frameworks write: whatever arrives, nothing panics, the bounds hold,
// and a name no queue can have is never an origin.
func FuzzRecognize(f *testing.F) {
	f.Add("Orders.OrderNotFound", "Order 1001 not found", "rabbitmq://h/v/orders", []byte(easyNetQV8), int64(2))
	f.Add("", "\x1b]52;c;x\x07", "::::", []byte(`{"Exception":`), int64(-1))
	f.Add("a:b", strings.Repeat("x", 5000), "rabbitmq://h/"+strings.Repeat("q", 300), []byte(`{"BasicProperties":{"Headers":{"a":{"Type":14,"Value":"!!"}}},"Exception":"E: m","Message":"x"}`), int64(1<<40))
	f.Fuzz(func(t *testing.T, typ, msg, addr string, body []byte, n int64) {
		for _, d := range []amqp.Delivery{
			{Headers: amqp.Table{"MT-Fault-ExceptionType": typ, "MT-Fault-Message": msg, "MT-Fault-InputAddress": addr, "MT-Fault-RetryCount": n, "MT-Fault-Timestamp": msg}},
			{Headers: amqp.Table{"x-exception-message": msg, "x-exception-stacktrace": typ + ": " + msg, "x-original-exchange": addr, "x-original-routingKey": typ, "retry-count": n}},
			{Headers: amqp.Table{"NServiceBus.FailedQ": addr, "NServiceBus.ExceptionInfo.Message": msg, "NServiceBus.TimeOfFailure": typ}},
			{Headers: amqp.Table{"rascal": amqp.Table{"originalQueue": addr, "error": amqp.Table{"message": msg, "code": n}, "recovery": amqp.Table{addr: amqp.Table{"forwarded": n}}}}},
			{Headers: amqp.Table{"reason_poisoned": msg, "topic_poisoned": addr}},
			{Type: "EasyNetQ.SystemMessages.Error, EasyNetQ", Body: body},
		} {
			dl := Decode(d, Options{}, true)
			f := dl.Failure
			if len(f.ErrorMessage) > maxErrorMessage+len("…") || len(f.ErrorType) > maxErrorType+len("…") || len(f.StackTrace) > maxStackTrace+len("…") {
				t.Fatalf("bounds: message %d, type %d, trace %d", len(f.ErrorMessage), len(f.ErrorType), len(f.StackTrace))
			}
			for _, o := range []string{f.OriginQueue, f.OriginExchange, f.OriginRoutingKey} {
				if len(o) > maxOriginName {
					t.Fatalf("an origin of %d bytes", len(o))
				}
			}
			if strings.ContainsAny(f.ErrorMessage, "\r\n") || dl.Attempts < 0 || dl.Group == "" {
				t.Fatalf("message %q, attempts %d, group %q", f.ErrorMessage, dl.Attempts, dl.Group)
			}
		}
	})
}
