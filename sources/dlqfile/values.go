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
	"sort"
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

// DecodeTable reads a table's fields back into the Go client's types.
func DecodeTable(t map[string]Value) (amqp.Table, error) {
	out := make(amqp.Table, len(t))
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := Decode(t[k])
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// Decode reads v back into the Go client's type for it.
func Decode(v Value) (any, error) {
	into := func(p any) error {
		if err := json.Unmarshal(v.Value, p); err != nil {
			return fmt.Errorf("%s value %s: %w", v.Type, v.Value, err)
		}
		return nil
	}
	switch v.Type {
	case "void":
		return nil, nil
	case "bool":
		var x bool
		return x, into(&x)
	case "int8":
		var x int8
		return x, into(&x)
	case "uint8":
		var x uint8
		return x, into(&x)
	case "int16":
		var x int16
		return x, into(&x)
	case "uint16":
		var x uint16
		return x, into(&x)
	case "int32":
		var x int32
		return x, into(&x)
	case "uint32":
		var x uint32
		return x, into(&x)
	case "int64":
		var x int64
		return x, into(&x)
	case "float32":
		var x float32
		return x, into(&x)
	case "float64":
		var x float64
		return x, into(&x)
	case "decimal":
		var x decimal
		if err := into(&x); err != nil {
			return nil, err
		}
		return amqp.Decimal{Scale: x.Scale, Value: x.Value}, nil
	case "string":
		var x string
		if err := into(&x); err != nil {
			return nil, err
		}
		if v.Encoding == "base64" {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("string value in base64: %w", err)
			}
			return string(b), nil
		}
		return x, nil
	case "bytes":
		var s string
		if err := into(&s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("bytes value: %w", err)
		}
		return b, nil
	case "timestamp":
		var s string
		if err := into(&s); err != nil {
			return nil, err
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, fmt.Errorf("timestamp value: %w", err)
		}
		return t, nil
	case "table":
		var t map[string]Value
		if err := into(&t); err != nil {
			return nil, err
		}
		return DecodeTable(t)
	case "array":
		var list []Value
		if err := into(&list); err != nil {
			return nil, err
		}
		out := make([]any, len(list))
		for i, e := range list {
			d, err := Decode(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = d
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown field type %q", v.Type)
}
