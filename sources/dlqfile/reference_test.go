package dlqfile

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The reference reading of a message line, through encoding/json's
// reflection: what the reader (read.go) must agree with. It is how lines
// were read before the reader was written by hand.

// referenceEntry reads line as encoding/json reads it.
func referenceEntry(line []byte) (Entry, error) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return Entry{}, err
	}
	p, err := m.Publishing()
	if err != nil {
		return Entry{}, err
	}
	return Entry{LogicalID: m.LogicalID, Group: m.Group, Reason: m.Reason, OriginQueue: m.OriginQueue, Exchange: m.Exchange,
		RoutingKey: m.RoutingKey, Publishing: p, Size: len(p.Body), BodySHA256: m.BodySHA256}, nil
}

// Publishing is m as it is published again: its properties, its headers
// in their types, its body.
func (m Message) Publishing() (amqp.Publishing, error) {
	h, err := DecodeTable(m.Headers)
	if err != nil {
		return amqp.Publishing{}, err
	}
	body, err := base64.StdEncoding.DecodeString(m.Body)
	if err != nil {
		return amqp.Publishing{}, fmt.Errorf("body_base64: %w", err)
	}
	if got := Digest(body); got != m.BodySHA256 {
		return amqp.Publishing{}, fmt.Errorf("body sha256 %s, the line says %s: the body was changed", got, m.BodySHA256)
	}
	p := m.Properties
	out := amqp.Publishing{Headers: h, ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, DeliveryMode: p.DeliveryMode,
		Priority: p.Priority, CorrelationId: p.CorrelationID, ReplyTo: p.ReplyTo, Expiration: p.Expiration, MessageId: p.MessageID,
		Type: p.Type, UserId: p.UserID, AppId: p.AppID, Body: body}
	if p.Timestamp != nil {
		out.Timestamp = *p.Timestamp
	}
	if len(out.Headers) == 0 {
		out.Headers = nil
	}
	return out, nil
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
