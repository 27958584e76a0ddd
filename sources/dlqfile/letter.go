package dlqfile

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
)

// A line is written straight from its letter: each header typed as it
// is appended, the body's base64 appended in place (an export writes one
// per message, and making a typed value of every header and nested field
// first cost three times the writing). The bytes are the reference
// writing's, a Message of typed Values (message_test.go), which is what
// encoding/json writes: letter_test.go and line_test.go hold the three
// equal.

// Letter writes the line of a dead letter as the broker delivered it.
func (e *Encoder) Letter(d domain.DeadLetter) error {
	b, err := appendLetter(e.buf[:0], d)
	e.buf = b[:0]
	if err != nil {
		return err
	}
	_, err = e.w.Write(b)
	return err
}

// delivered is d's properties, headers and body as the broker delivered
// them: an envelope convention's letter (EasyNetQ) keeps its envelope.
func delivered(d domain.DeadLetter) (domain.Properties, map[string]any, []byte) {
	if r := d.Raw; r != nil && r.Body != nil {
		return r.Properties, r.Headers, r.Body
	}
	return d.Properties, d.Headers, d.Body
}

// checkText refuses properties a line cannot keep as they are, naming
// the first in the order the line writes them.
func checkText(id string, p domain.Properties) error {
	for _, f := range []struct{ name, value string }{
		{"content_type", p.ContentType}, {"content_encoding", p.ContentEncoding}, {"correlation_id", p.CorrelationID},
		{"reply_to", p.ReplyTo}, {"expiration", p.Expiration}, {"message_id", p.MessageID}, {"type", p.Type},
		{"user_id", p.UserID}, {"app_id", p.AppID},
	} {
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("message %s: its %s is not UTF-8, which an export line cannot keep as it is", id, f.name)
		}
	}
	return nil
}

// propertiesOf is p as a line writes it.
func propertiesOf(p domain.Properties) Properties {
	out := Properties{ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, DeliveryMode: p.DeliveryMode,
		Priority: p.Priority, CorrelationID: p.CorrelationID, ReplyTo: p.ReplyTo, Expiration: p.Expiration,
		MessageID: p.MessageID, Type: p.Type, UserID: p.UserID, AppID: p.AppID}
	if !p.Timestamp.IsZero() {
		ts := p.Timestamp.UTC()
		out.Timestamp = &ts
	}
	return out
}

// appendLetter appends d's line, with its newline.
func appendLetter(b []byte, d domain.DeadLetter) ([]byte, error) {
	props, headers, body := delivered(d)
	if err := checkText(d.LogicalID, props); err != nil {
		return b, err
	}
	b = append(b, `{"logical_id":`...)
	b = appendString(b, d.LogicalID)
	var key string
	if len(d.RoutingKeys) > 0 {
		key = d.RoutingKeys[0]
	}
	for _, f := range []struct{ name, value string }{
		{"group", d.Group}, {"reason", d.Reason}, {"origin_queue", d.OriginQueue}, {"exchange", d.OriginExchange}, {"routing_key", key},
	} {
		if f.value != "" {
			b = append(b, ',')
			b = appendString(b, f.name)
			b = append(b, ':')
			b = appendString(b, f.value)
		}
	}
	b = append(b, `,"properties":`...)
	b = appendProperties(b, propertiesOf(props))
	b = append(b, `,"headers":`...)
	b, err := appendTypedTable(b, headers)
	if err != nil {
		return b, fmt.Errorf("message %s: %w", d.LogicalID, err)
	}
	// Base64 and hex need no escaping.
	b = append(b, `,"body_base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, body)
	b = append(b, `","body_sha256":"`...)
	sum := sha256.Sum256(body)
	b = hex.AppendEncode(b, sum[:])
	return append(b, '"', '}', '\n'), nil
}

// appendTypedTable appends t with every field typed: its names sorted
// (as encoding/json sorts a map's keys), each value {"type", "value"}.
func appendTypedTable(b []byte, t map[string]any) ([]byte, error) {
	var small [16]string
	names := small[:0]
	for k := range t {
		if !utf8.ValidString(k) {
			return b, fmt.Errorf("header name %q is not UTF-8, which an export line cannot keep as it is", k)
		}
		names = append(names, k)
	}
	slices.Sort(names)
	b = append(b, '{')
	for i, k := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendTyped(b, t[k]); err != nil {
			return b, fmt.Errorf("header %q: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// appendTyped appends v with its type: {"type":…,"value":…}, and
// "encoding":"base64" for a string whose bytes are not UTF-8.
func appendTyped(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case bool:
		b = strconv.AppendBool(typed(b, "bool"), x)
	case int8:
		b = strconv.AppendInt(typed(b, "int8"), int64(x), 10)
	case uint8:
		b = strconv.AppendUint(typed(b, "uint8"), uint64(x), 10)
	case int16:
		b = strconv.AppendInt(typed(b, "int16"), int64(x), 10)
	case uint16:
		b = strconv.AppendUint(typed(b, "uint16"), uint64(x), 10)
	case int32:
		b = strconv.AppendInt(typed(b, "int32"), int64(x), 10)
	case uint32:
		b = strconv.AppendUint(typed(b, "uint32"), uint64(x), 10)
	case int64:
		b = strconv.AppendInt(typed(b, "int64"), x, 10)
	case int:
		b = strconv.AppendInt(typed(b, "int64"), int64(x), 10)
	case string:
		if !utf8.ValidString(x) {
			// Not UTF-8: its bytes in base64.
			b = append(base64.StdEncoding.AppendEncode(append(typed(b, "string"), '"'), []byte(x)), `","encoding":"base64"}`...)
			return b, nil
		}
		b = appendString(typed(b, "string"), x)
	case nil:
		b = append(typed(b, "void"), "null"...)
	case float32:
		if b, err = appendFloat(b, "float32", float64(x), x); err != nil {
			return b, err
		}
	case float64:
		if b, err = appendFloat(b, "float64", x, x); err != nil {
			return b, err
		}
	case amqp.Decimal:
		b = append(strconv.AppendInt(append(typed(b, "decimal"), `{"scale":`...), int64(x.Scale), 10), `,"value":`...)
		b = append(strconv.AppendInt(b, int64(x.Value), 10), '}')
	case []byte:
		b = append(base64.StdEncoding.AppendEncode(append(typed(b, "bytes"), '"'), x), '"')
	case time.Time:
		b = append(x.UTC().AppendFormat(append(typed(b, "timestamp"), '"'), time.RFC3339), '"')
	case amqp.Table:
		if b, err = appendTypedTable(typed(b, "table"), x); err != nil {
			return b, err
		}
	case map[string]any:
		if b, err = appendTypedTable(typed(b, "table"), x); err != nil {
			return b, err
		}
	case []any:
		b = append(typed(b, "array"), '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendTyped(b, e); err != nil {
				return b, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		b = append(b, ']')
	default:
		return b, fmt.Errorf("a value of Go type %T has no AMQP field type", v)
	}
	return append(b, '}'), nil
}

// appendFloat appends a float as encoding/json writes it; NaN and the
// infinities have none.
func appendFloat(b []byte, typ string, f float64, v any) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("%s %v has no JSON form", typ, v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(typed(b, typ), raw...), nil
}

// typed appends the start of a typed value: {"type":"typ","value":
func typed(b []byte, typ string) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	return append(b, `","value":`...)
}
