package domain

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Header values arrive as any AMQP field type, and anything a client
// published may sit in them. These conversions accept every type the
// decoder produces (and the wider Go types a program may build), and say
// "no" rather than guess or panic.

// ValueText returns v as a string when it is textual: a string or bytes.
func ValueText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

// ValueScalarText renders a scalar header value as text, for use as an ID:
// strings, bytes and integers qualify; tables, arrays, floats do not.
func ValueScalarText(v any) (string, bool) {
	if s, ok := ValueText(v); ok {
		return s, true
	}
	if n, ok := ValueInt(v); ok {
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}

// ValueInt returns v as an int64 when it is a whole number that fits: any
// integer type, an integral float, a decimal with an integral value, or a
// string of decimal digits (some clients send counters as text).
func ValueInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case float32:
		return floatInt(float64(x))
	case float64:
		return floatInt(x)
	case amqp.Decimal:
		return decimalInt(x)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	case []byte:
		n, err := strconv.ParseInt(strings.TrimSpace(string(x)), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func floatInt(f float64) (int64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

func decimalInt(d amqp.Decimal) (int64, bool) {
	if d.Scale == 0 {
		return int64(d.Value), true
	}
	if d.Scale > 9 {
		return 0, d.Value == 0
	}
	div := int64(math.Pow10(int(d.Scale)))
	if int64(d.Value)%div != 0 {
		return 0, false
	}
	return int64(d.Value) / div, true
}

// ValueTime returns v as a time when it is an AMQP timestamp, or an
// integer of seconds since the epoch (as some clients write times).
func ValueTime(v any) (time.Time, bool) {
	if t, ok := v.(time.Time); ok {
		return t, !t.IsZero()
	}
	if n, ok := ValueInt(v); ok && n > 0 && n < 1<<40 {
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

// ValueTable returns v as a table when it is one, whatever map type holds it.
func ValueTable(v any) (amqp.Table, bool) {
	switch x := v.(type) {
	case amqp.Table:
		return x, true
	case map[string]any:
		return amqp.Table(x), true
	}
	return nil, false
}

// ValueList returns v as a list when it is an array of any element type a
// program may have built.
func ValueList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []amqp.Table:
		out := make([]any, len(x))
		for i, t := range x {
			out[i] = t
		}
		return out, true
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// MaxValueDepth bounds recursion over nested tables and arrays, which a
// hostile publisher can nest as deep as the frame allows.
const MaxValueDepth = 32

// Plain converts an AMQP field value to plain Go values that JSON and the
// filter language understand: string, int64, float64, bool, time.Time,
// nil, []any and map[string]any. NaN and infinities become text, and a
// time outside years 0–9999 its Unix seconds. Bytes become a string when they are
// valid UTF-8 and stay bytes otherwise (JSON then writes base64); a
// decimal becomes its exact text.
func Plain(v any) any { return plain(v, 0) }

func plain(v any, depth int) any {
	if depth > MaxValueDepth {
		return nil
	}
	switch x := v.(type) {
	case nil, string, bool:
		return x
	case time.Time:
		if y := x.Year(); y < 0 || y > 9999 {
			return x.Unix()
		}
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return x
	case float32:
		return plainFloat(float64(x))
	case float64:
		return plainFloat(x)
	case amqp.Decimal:
		return decimalText(x)
	}
	if n, ok := ValueInt(v); ok {
		return n
	}
	if t, ok := ValueTable(v); ok {
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = plain(e, depth+1)
		}
		return out
	}
	if l, ok := ValueList(v); ok {
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = plain(e, depth+1)
		}
		return out
	}
	return nil
}

// plainFloat keeps NaN and infinities as text, which JSON can carry.
func plainFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return f
}

func decimalText(d amqp.Decimal) string {
	r := new(big.Rat).SetFrac(big.NewInt(int64(d.Value)), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	return r.FloatString(int(d.Scale))
}

// PlainHeaders converts a whole header table with Plain.
func PlainHeaders(h amqp.Table) map[string]any {
	if len(h) == 0 {
		return map[string]any{}
	}
	out := make(map[string]any, len(h))
	for k, v := range h {
		out[k] = Plain(v)
	}
	return out
}

// Tables turns every AMQP table inside v into a plain map, leaving all
// other values as they are, so a reader outside the AMQP client (a
// screen) can walk nested headers without importing it.
func Tables(v any) any {
	switch x := v.(type) {
	case amqp.Table:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Tables(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Tables(e)
		}
		return out
	}
	return v
}
