package dlqfile

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// Lines are written by hand rather than through encoding/json's
// reflection (letter.go): the JSON is what encoding/json would write for
// the same value, so any JSON reader reads it back as it is.

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
