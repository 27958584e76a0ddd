package dlqfile

import (
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// Lines are written by hand rather than through encoding/json's
// reflection: an export writes a line per message, and most of a line is
// typed headers. The JSON is what encoding/json would write for the same
// value, so the reader (encoding/json) reads it back as it is.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it without HTML escaping.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
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

// appendField appends ,"name":"value" when value is set.
func appendField(b []byte, name, value string, first *bool) []byte {
	if value == "" {
		return b
	}
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = appendString(b, name)
	b = append(b, ':')
	return appendString(b, value)
}

// appendProperties appends the properties object.
func appendProperties(b []byte, p Properties) []byte {
	b = append(b, '{')
	first := true
	b = appendField(b, "content_type", p.ContentType, &first)
	b = appendField(b, "content_encoding", p.ContentEncoding, &first)
	if p.DeliveryMode != 0 {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `"delivery_mode":`...)
		b = strconv.AppendUint(b, uint64(p.DeliveryMode), 10)
	}
	if p.Priority != 0 {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `"priority":`...)
		b = strconv.AppendUint(b, uint64(p.Priority), 10)
	}
	b = appendField(b, "correlation_id", p.CorrelationID, &first)
	b = appendField(b, "reply_to", p.ReplyTo, &first)
	b = appendField(b, "expiration", p.Expiration, &first)
	b = appendField(b, "message_id", p.MessageID, &first)
	if p.Timestamp != nil {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `"timestamp":"`...)
		b = p.Timestamp.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	b = appendField(b, "type", p.Type, &first)
	b = appendField(b, "user_id", p.UserID, &first)
	b = appendField(b, "app_id", p.AppID, &first)
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
