package dlqfile

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
)

// The reference writing of a message line: a Message of typed Values,
// written by hand as encoding/json writes it (TestALineIsWhatEncodingJSONWrites).
// It is how lines were written before Letter wrote them straight from
// the letter, and what Letter must agree with (letter_test.go); the
// tests build their files with it.

// Message is one message line: the message as the broker delivered it,
// and what warren read of it (logical ID, failure group, origin).
type Message struct {
	LogicalID   string           `json:"logical_id"`
	Group       string           `json:"group,omitempty"`
	Reason      string           `json:"reason,omitempty"`
	OriginQueue string           `json:"origin_queue,omitempty"`
	Exchange    string           `json:"exchange,omitempty"`    // the original exchange (x-death)
	RoutingKey  string           `json:"routing_key,omitempty"` // the original routing key (x-death)
	Properties  Properties       `json:"properties"`
	Headers     map[string]Value `json:"headers"`
	Body        string           `json:"body_base64"`
	BodySHA256  string           `json:"body_sha256"`
}

// Message writes one message line (line.go: written by hand, as
// encoding/json would write it).
func (e *Encoder) Message(m Message) error {
	e.buf = appendMessage(e.buf[:0], m)
	_, err := e.w.Write(e.buf)
	return err
}

// FromLetter is the line of a dead letter as the broker delivered it: an
// envelope convention's letter (EasyNetQ) keeps its envelope.
func FromLetter(d domain.DeadLetter) (Message, error) {
	props, headers, body := delivered(d)
	if err := checkText(d.LogicalID, props); err != nil {
		return Message{}, err
	}
	h, err := EncodeTable(headers)
	if err != nil {
		return Message{}, fmt.Errorf("message %s: %w", d.LogicalID, err)
	}
	m := Message{LogicalID: d.LogicalID, Group: d.Group, Reason: d.Reason, OriginQueue: d.OriginQueue, Exchange: d.OriginExchange,
		Headers: h, Body: base64.StdEncoding.EncodeToString(body), BodySHA256: Digest(body), Properties: propertiesOf(props)}
	if len(d.RoutingKeys) > 0 {
		m.RoutingKey = d.RoutingKeys[0]
	}
	return m, nil
}

// Value is one AMQP field value with its type: the AMQP 0-9-1 field
// types as RabbitMQ and the Go client read them.
type Value struct {
	// Type is bool, int8, uint8, int16, uint16, int32, uint32, int64,
	// float32, float64, decimal, string, bytes, timestamp, table, array
	// or void.
	Type string `json:"type"`
	// Value is the value in JSON: a number, text, true/false; bytes in
	// base64; a timestamp in RFC 3339 (whole seconds, as AMQP keeps it);
	// a decimal {"scale": s, "value": v}; a table an object of Values;
	// an array a list of Values; void null.
	Value json.RawMessage `json:"value"`
	// Encoding is "base64" for a string whose bytes are not UTF-8 (AMQP
	// strings may hold any bytes; JSON text may not): Value is then the
	// bytes in base64.
	Encoding string `json:"encoding,omitempty"`
}

// decimal is a decimal's JSON.
type decimal struct {
	Scale uint8 `json:"scale"`
	Value int32 `json:"value"`
}

// EncodeTable gives every field of t its type.
func EncodeTable(t map[string]any) (map[string]Value, error) {
	out := make(map[string]Value, len(t))
	for k, v := range t {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("header name %q is not UTF-8, which an export line cannot keep as it is", k)
		}
		ev, err := Encode(v)
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		out[k] = ev
	}
	return out, nil
}

// Encode gives v its type.
func Encode(v any) (Value, error) {
	if raw, typ, ok := scalar(v); ok {
		return Value{Type: typ, Value: raw}, nil
	}
	switch x := v.(type) {
	case nil:
		return Value{Type: "void", Value: []byte("null")}, nil
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return Value{}, fmt.Errorf("float32 %v has no JSON form", x)
		}
		b, err := json.Marshal(x)
		return Value{Type: "float32", Value: b}, err
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Value{}, fmt.Errorf("float64 %v has no JSON form", x)
		}
		b, err := json.Marshal(x)
		return Value{Type: "float64", Value: b}, err
	case amqp.Decimal:
		b := append([]byte(`{"scale":`), strconv.Itoa(int(x.Scale))...)
		b = append(append(b, `,"value":`...), strconv.Itoa(int(x.Value))...)
		return Value{Type: "decimal", Value: append(b, '}')}, nil
	case string: // not UTF-8: its bytes in base64
		return Value{Type: "string", Value: appendString(nil, base64.StdEncoding.EncodeToString([]byte(x))), Encoding: "base64"}, nil
	case []byte:
		return Value{Type: "bytes", Value: appendString(nil, base64.StdEncoding.EncodeToString(x))}, nil
	case time.Time:
		return Value{Type: "timestamp", Value: appendString(nil, x.UTC().Format(time.RFC3339))}, nil
	case amqp.Table:
		t, err := EncodeTable(x)
		if err != nil {
			return Value{}, err
		}
		return Value{Type: "table", Value: appendTable(nil, t)}, nil
	case map[string]any:
		t, err := EncodeTable(x)
		if err != nil {
			return Value{}, err
		}
		return Value{Type: "table", Value: appendTable(nil, t)}, nil
	case []any:
		b := []byte{'['}
		for i, e := range x {
			ev, err := Encode(e)
			if err != nil {
				return Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, ev)
		}
		return Value{Type: "array", Value: append(b, ']')}, nil
	}
	return Value{}, fmt.Errorf("a value of Go type %T has no AMQP field type", v)
}

// appendValue appends v's JSON: {"type":…,"value":…[,"encoding":…]}.
func appendValue(b []byte, v Value) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, v.Type)
	b = append(b, `,"value":`...)
	b = append(b, v.Value...)
	if v.Encoding != "" {
		b = append(b, `,"encoding":`...)
		b = appendString(b, v.Encoding)
	}
	return append(b, '}')
}

// appendTable appends a table of Values, its names sorted as
// encoding/json sorts a map's keys.
func appendTable(b []byte, t map[string]Value) []byte {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, t[k])
	}
	return append(b, '}')
}

// appendMessage appends m's line, with its newline.
func appendMessage(b []byte, m Message) []byte {
	b = append(b, `{"logical_id":`...)
	b = appendString(b, m.LogicalID)
	for _, f := range []struct{ name, value string }{
		{"group", m.Group}, {"reason", m.Reason}, {"origin_queue", m.OriginQueue}, {"exchange", m.Exchange}, {"routing_key", m.RoutingKey},
	} {
		if f.value != "" {
			b = append(b, ',')
			b = appendString(b, f.name)
			b = append(b, ':')
			b = appendString(b, f.value)
		}
	}
	b = append(b, `,"properties":`...)
	b = appendProperties(b, m.Properties)
	b = append(b, `,"headers":`...)
	if m.Headers == nil {
		b = append(b, "null"...)
	} else {
		b = appendTable(b, m.Headers)
	}
	b = append(b, `,"body_base64":`...)
	b = appendString(b, m.Body)
	b = append(b, `,"body_sha256":`...)
	b = appendString(b, m.BodySHA256)
	return append(b, '}', '\n')
}

// scalar is v's JSON when v is a number, a boolean or a string, written
// without reflection; ok is false for the other types.
func scalar(v any) (raw []byte, typ string, ok bool) {
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(nil, x), "bool", true
	case int8:
		return strconv.AppendInt(nil, int64(x), 10), "int8", true
	case uint8:
		return strconv.AppendUint(nil, uint64(x), 10), "uint8", true
	case int16:
		return strconv.AppendInt(nil, int64(x), 10), "int16", true
	case uint16:
		return strconv.AppendUint(nil, uint64(x), 10), "uint16", true
	case int32:
		return strconv.AppendInt(nil, int64(x), 10), "int32", true
	case uint32:
		return strconv.AppendUint(nil, uint64(x), 10), "uint32", true
	case int64:
		return strconv.AppendInt(nil, x, 10), "int64", true
	case int:
		return strconv.AppendInt(nil, int64(x), 10), "int64", true
	case string:
		if utf8.ValidString(x) {
			return appendString(nil, x), "string", true
		}
	}
	return nil, "", false
}
