// Package dlqfile is the file `warren dlq export` writes and `warren dlq
// import` reads (docs/ARCHITECTURE.md §4.14): JSON Lines, a header line
// then one line per message, every property and every header with its
// AMQP type, so a timestamp stays a timestamp and a nested table a table
// when the message is published again.
package dlqfile

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
)

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
