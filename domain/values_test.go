package domain

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestPlainConvertsEveryFieldType(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"string", "s", "s"},
		{"bool", true, true},
		{"int8", int8(-3), int64(-3)},
		{"int16", int16(300), int64(300)},
		{"int32", int32(-70000), int64(-70000)},
		{"int64", int64(math.MaxInt64), int64(math.MaxInt64)},
		{"uint8", uint8(200), int64(200)},
		{"uint16", uint16(60000), int64(60000)},
		{"uint32", uint32(4000000000), int64(4000000000)},
		{"uint64 too large", uint64(math.MaxUint64), nil},
		{"float32", float32(1.5), float64(1.5)},
		{"float64", 2.25, 2.25},
		{"NaN as text", math.NaN(), "NaN"},
		{"infinity as text", float32(math.Inf(-1)), "-Inf"},
		{"time beyond year 9999 as seconds", time.Unix(1<<40, 0), int64(1 << 40)},
		{"decimal", amqp.Decimal{Scale: 2, Value: -1234}, "-12.34"},
		{"decimal scale 0", amqp.Decimal{Scale: 0, Value: 7}, "7"},
		{"time", t0, t0},
		{"utf-8 bytes", []byte("héllo"), "héllo"},
		{"binary bytes stay bytes", []byte{0xff, 0x00}, []byte{0xff, 0x00}},
		{"table", amqp.Table{"a": int16(1), "b": []any{"x", int8(2)}}, map[string]any{"a": int64(1), "b": []any{"x", int64(2)}}},
		{"unsupported type", struct{}{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Plain(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Plain(%#v) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPlainStopsAtHostileNesting(t *testing.T) {
	var v any = "leaf"
	for range 10000 {
		v = []any{v}
	}
	if _, err := json.Marshal(Plain(v)); err != nil {
		t.Fatalf("deeply nested value does not marshal: %v", err)
	}
}

func TestIntegerAcceptsWholeNumbersOnly(t *testing.T) {
	tests := []struct {
		in     any
		want   int64
		wantOK bool
	}{
		{int64(5), 5, true},
		{"12", 12, true},
		{" 12 ", 12, true},
		{"1.5", 0, false},
		{1.5, 0, false},
		{math.Inf(1), 0, false},
		{1e300, 0, false},
		{amqp.Decimal{Scale: 1, Value: 30}, 3, true},
		{amqp.Decimal{Scale: 1, Value: 31}, 0, false},
		{amqp.Decimal{Scale: 20, Value: 0}, 0, true},
		{time.Time{}, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := ValueInt(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ValueInt(%#v) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestTablesTurnsNestedAMQPTablesIntoPlainMapsAndKeepsTheRest(t *testing.T) {
	raw := []byte{0xff, 0x00}
	in := amqp.Table{
		"deaths": []any{amqp.Table{"count": int64(3)}},
		"trace":  amqp.Table{"span": "ab12", "inner": amqp.Table{"k": raw}},
		"n":      int32(7),
	}
	got, ok := Tables(in).(map[string]any)
	if !ok {
		t.Fatalf("Tables(table) = %T, want map[string]any", Tables(in))
	}
	deaths, ok := got["deaths"].([]any)
	if !ok || len(deaths) != 1 {
		t.Fatalf("deaths = %#v", got["deaths"])
	}
	if d, ok := deaths[0].(map[string]any); !ok || d["count"] != int64(3) {
		t.Errorf("deaths[0] = %#v, want a plain map with count 3", deaths[0])
	}
	inner, ok := got["trace"].(map[string]any)["inner"].(map[string]any)
	if !ok || !bytes.Equal(inner["k"].([]byte), raw) {
		t.Errorf("trace.inner = %#v, want a plain map keeping the raw bytes", got["trace"])
	}
	if got["n"] != int32(7) {
		t.Errorf("n = %#v, want int32(7) untouched", got["n"])
	}
}
