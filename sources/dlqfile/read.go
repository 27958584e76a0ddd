package dlqfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A message line is read in one pass over its tokens (jsontext), each
// header straight into the Go client's type for it: an import reads its
// file twice (checked whole, then published), and encoding/json's
// reflection, with a second decode for every nested value, cost it more
// than the publishing. The reading is strict where the writer is: a
// name the format does not define, a name given twice, text that is not
// UTF-8, a typed value that is null are refused, naming what was wrong,
// since no warren wrote them. Whatever it accepts, encoding/json reads
// the same (read_test.go holds the two equal).

// Entry is a message line read back: the message as it is published
// again (properties, headers in their types, the body checked against
// its sha256), and what the export read of it.
type Entry struct {
	LogicalID   string
	Group       string
	Reason      string
	OriginQueue string
	Exchange    string // the original exchange (x-death)
	RoutingKey  string // the original routing key (x-death)
	Publishing  amqp.Publishing
	// Size is the body's length, also where a check kept no body.
	Size int
	// BodySHA256 is the body's sha256 in hex, as the line gives it and
	// the body was found to have.
	BodySHA256 string
}

// lineReader decodes message lines; one serves a whole file.
type lineReader struct {
	dec jsontext.Decoder
	in  bytes.Buffer // the line the decoder reads
	// check reads a line to check it: the same reading, refusing the
	// same lines, but no header and no body is kept (an import's check
	// before publishing needs each message's names and size only).
	check   bool
	scratch []byte // a check's bodies, one at a time
	// line is the line being read; lastRaw are the headers of the line
	// before when they were read without fault, last the table read from
	// them (none for a check).
	line    []byte
	last    amqp.Table
	lastRaw []byte
	lastOK  bool
	// spliced is the line as the decoder reads it when its headers were
	// cut out (splice); headersAt is where their stand-in is (-1: none).
	spliced   []byte
	headersAt int
	// noSplice reads every line's tokens whole (a refused line is read
	// again so, for its error to be in the words of a whole reading).
	noSplice bool
	// strs are the short strings read so far, each kept once: the same
	// header names, queues, reasons and content types come on every
	// line, and a copy of each per message is garbage.
	strs map[string]string
}

// Interning keeps strings of up to internLen bytes, internMax of them.
const (
	internLen = 64
	internMax = 4096
)

// intern is b as a string, the one kept when it came before.
func (lr *lineReader) intern(b []byte) string {
	if len(b) > internLen {
		return string(b)
	}
	if s, ok := lr.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if lr.strs == nil {
		lr.strs = make(map[string]string)
	}
	if len(lr.strs) < internMax {
		lr.strs[s] = s
	}
	return s
}

// str reads a string value, interned when it has no escapes.
func (lr *lineReader) str() (string, error) { return lr.strAs(true) }

// strAs reads a string value, interned when keep is set and it has no
// escapes. A string no other line repeats (an ID, a digest) is not kept:
// it would only fill the table the others are looked up in.
func (lr *lineReader) strAs(keep bool) (string, error) {
	raw, err := lr.dec.ReadValue()
	if err != nil {
		return "", err
	}
	if b := raw[1 : len(raw)-1]; bytes.IndexByte(b, '\\') < 0 {
		if !keep {
			return string(b), nil
		}
		return lr.intern(b), nil
	}
	return unquote(raw), nil
}

// entry decodes one message line.
func (lr *lineReader) entry(line []byte) (Entry, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return Entry{}, errors.New("an empty line: an export has none (was the file edited?)")
	}
	e, err := lr.entryAs(line, !lr.noSplice)
	if err != nil && len(lr.line) != len(line) {
		// Refused with values cut out: in the words of a whole reading.
		_, err = lr.entryAs(line, false)
		if err == nil {
			err = errors.New("not a message line") // splice says it cannot be
		}
	}
	return e, err
}

func (lr *lineReader) entryAs(line []byte, splice bool) (Entry, error) {
	lr.line, lr.headersAt = line, -1
	if splice {
		lr.line = lr.splice(line) // shorter when the headers were cut out
	}
	lr.in = *bytes.NewBuffer(lr.line)
	lr.dec.Reset(&lr.in) // read in place, not copied
	e, body, sum, hasSum, err := lr.message()
	if err != nil {
		return Entry{}, fmt.Errorf("not a message line: %w", err)
	}
	if _, err := lr.dec.ReadToken(); err != io.EOF {
		return Entry{}, errors.New("not a message line: more than one JSON value on the line")
	}
	if !hasSum {
		return Entry{}, errors.New("no body_sha256: a message line carries its body's sha256")
	}
	got := sha256.Sum256(body)
	var hexed [2 * sha256.Size]byte
	hex.Encode(hexed[:], got[:])
	if string(hexed[:]) != sum {
		said := sum
		if len(said) > 2*sha256.Size {
			said = said[:2*sha256.Size] + "…"
		}
		return Entry{}, fmt.Errorf("body sha256 %x, the line says %q: the body was changed", got, said)
	}
	e.Size, e.BodySHA256 = len(body), sum
	if lr.check {
		e.Publishing.Headers = nil
		return e, nil
	}
	e.Publishing.Body = body
	if len(e.Publishing.Headers) == 0 {
		e.Publishing.Headers = nil
	}
	return e, nil
}

// message reads the line's object: the entry, its body, and the sha256
// the line gives it (hasSum false when it gives none).
func (lr *lineReader) message() (e Entry, body []byte, sum string, hasSum bool, err error) {
	if err := lr.open(""); err != nil {
		return e, nil, "", false, err
	}
	for {
		name, more, err := lr.name()
		if err != nil || !more {
			return e, body, sum, hasSum, err
		}
		switch string(name) {
		case "logical_id":
			e.LogicalID, err = lr.unique("logical_id")
		case "group":
			e.Group, err = lr.text("group")
		case "reason":
			e.Reason, err = lr.text("reason")
		case "origin_queue":
			e.OriginQueue, err = lr.text("origin_queue")
		case "exchange":
			e.Exchange, err = lr.text("exchange")
		case "routing_key":
			e.RoutingKey, err = lr.text("routing_key")
		case "properties":
			err = lr.properties(&e.Publishing)
		case "headers":
			if lr.dec.PeekKind() == 'n' {
				_, err = lr.dec.ReadToken()
				break
			}
			e.Publishing.Headers, err = lr.headers()
		case "body_base64":
			body, err = lr.base64("body_base64")
		case "body_sha256":
			sum, err = lr.unique("body_sha256")
			hasSum = true
		default:
			err = unknownName(string(name))
		}
		if err != nil {
			return e, nil, "", false, err
		}
	}
}

// Splicing. Most of a line's bytes are its headers and its body, and the
// headers of a burst of dead letters are the same bytes line after line
// (the same x-death, to the second): tokenizing them again is most of a
// reading. Before a line is read, headers of the same bytes as the line
// before's are cut out of it and a stand-in, {}, left in their place; the
// decoder reads the rest, and at the stand-in's place the headers are the
// line before's table.
//
// They are found by their bytes: `"headers":` and the line before's
// headers, a complete JSON object read without fault, so an object
// starting there ends where those bytes do. The pattern cannot start
// inside a JSON string (its quotes would end the string). Where it is the
// top-level name and its value, the stand-in is a value of the same kind:
// the line is valid JSON as it was, and reads the same. The stand-in is
// taken for the headers only where the decoder finds the value of the
// top-level "headers", so a pattern found anywhere else (a name nested in
// a value, or escaped in another) leaves a stand-in read as what it is,
// and the line is refused as it would have been. A line refused is read
// again whole, for the error to be a whole reading's; the fuzz target
// holds the two readings equal. (A body's base64 is not cut out: finding
// where it ends costs what tokenizing it does.)

var headersKey = []byte(`"headers":`)

// splice is line with headers of the same bytes as the line before's cut
// out; line itself when there are none.
func (lr *lineReader) splice(line []byte) []byte {
	if !lr.lastOK || len(lr.lastRaw) <= 64 {
		return line
	}
	i := bytes.Index(line, headersKey)
	if i < 0 || !bytes.HasPrefix(line[i+len(headersKey):], lr.lastRaw) {
		return line
	}
	from := i + len(headersKey)
	out := append(lr.spliced[:0], line[:from]...)
	lr.headersAt = len(out)
	out = append(append(out, "{}"...), line[from+len(lr.lastRaw):]...)
	lr.spliced = out
	return out
}

// valueAt is where the value after the name just read starts in the
// line: past the colon and white space.
func (lr *lineReader) valueAt() int {
	at := int(lr.dec.InputOffset())
	for at < len(lr.line) {
		switch lr.line[at] {
		case ' ', '\t', '\n', '\r', ':':
			at++
			continue
		}
		break
	}
	return at
}

// headers reads a line's headers. Dead letters of one burst carry the
// same headers to the byte (the same x-death, to the second), and
// headers of the same bytes as the line before's are that line's table,
// not read again: messages of a file share it, so a reader of their
// headers must not change them (a walk only reads them).
func (lr *lineReader) headers() (amqp.Table, error) {
	// The value starts at the first '{' after the last token read: only
	// the name's colon and white space come between.
	if lr.dec.PeekKind() != '{' {
		return lr.table("headers") // refused, in its words
	}
	if lr.headersAt >= 0 && lr.valueAt() == lr.headersAt {
		lr.headersAt = -1
		if err := lr.dec.SkipValue(); err != nil { // the stand-in
			return nil, err
		}
		return lr.last, nil
	}
	off := int(lr.dec.InputOffset())
	at := off + bytes.IndexByte(lr.line[off:], '{')
	if lr.lastOK && bytes.HasPrefix(lr.line[at:], lr.lastRaw) {
		// An object ends where its braces close: this one is those bytes.
		if err := lr.dec.SkipValue(); err != nil {
			return nil, err
		}
		return lr.last, nil
	}
	lr.lastOK = false
	t, err := lr.table("headers")
	if err != nil {
		return nil, err
	}
	lr.last, lr.lastRaw, lr.lastOK = t, append(lr.lastRaw[:0], lr.line[at:lr.dec.InputOffset()]...), true
	return t, nil
}

// unknownName refuses a name the format does not define.
func unknownName(name string) error {
	return fmt.Errorf("%q is not a field of an export line (a file another program wrote or changed?)", name)
}

// open reads the '{' that starts an object.
func (lr *lineReader) open(what string) error {
	tok, err := lr.dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("%swant an object, found %s", prefix(what), tok.Kind())
	}
	return nil
}

// name reads the next name of the object being read, or the '}' that
// ends it (more is false). The name is valid until the next read; a name
// given twice is refused by the decoder.
func (lr *lineReader) name() (name []byte, more bool, err error) {
	if lr.dec.PeekKind() == '}' {
		_, err := lr.dec.ReadToken()
		return nil, false, err
	}
	raw, err := lr.dec.ReadValue()
	if err != nil {
		return nil, false, err
	}
	if name = raw[1 : len(raw)-1]; bytes.IndexByte(name, '\\') >= 0 {
		name = []byte(unquote(raw)) // escaped: JSON, if not as warren writes it
	}
	return name, true, nil
}

// unquote is the JSON string raw, unescaped.
func unquote(raw jsontext.Value) string {
	var d jsontext.Decoder
	d.Reset(bytes.NewBuffer(raw))
	tok, _ := d.ReadToken() // raw was read as a string already
	return tok.String()
}

// prefix is what, ready to stand before a message.
func prefix(what string) string {
	if what == "" {
		return ""
	}
	return what + ": "
}

// text reads a string; null is the empty string, as encoding/json reads it.
func (lr *lineReader) text(what string) (string, error) { return lr.textAs(what, true) }

// unique reads a string as text does, one that no other line repeats.
func (lr *lineReader) unique(what string) (string, error) { return lr.textAs(what, false) }

func (lr *lineReader) textAs(what string, keep bool) (string, error) {
	if lr.dec.PeekKind() == '"' {
		return lr.strAs(keep)
	}
	tok, err := lr.dec.ReadToken()
	if err != nil {
		return "", err
	}
	if tok.Kind() == 'n' {
		return "", nil
	}
	return "", fmt.Errorf("%s: want a string, found %s", what, tok.Kind())
}

// base64 reads a string of base64 into its bytes, decoding straight
// from the line when the string has no escapes (base64 needs none);
// null is no bytes.
func (lr *lineReader) base64(what string) ([]byte, error) {
	if lr.dec.PeekKind() != '"' {
		_, err := lr.text(what)
		return nil, err
	}
	raw, err := lr.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	src := raw[1 : len(raw)-1]
	if bytes.IndexByte(src, '\\') >= 0 {
		src = []byte(unquote(raw))
	}
	var out []byte
	if n := base64.StdEncoding.DecodedLen(len(src)); lr.check {
		if cap(lr.scratch) < n {
			lr.scratch = make([]byte, n)
		}
		out = lr.scratch[:n]
	} else {
		out = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(out, src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out[:n], nil
}

// uint8Field reads a property that is a number from 0 to 255; null is 0.
func (lr *lineReader) uint8Field(what string) (uint8, error) {
	tok, err := lr.dec.ReadToken()
	if err != nil {
		return 0, err
	}
	switch tok.Kind() {
	case 'n':
		return 0, nil
	case '0':
		n, err := strconv.ParseUint(tok.String(), 10, 8)
		if err != nil {
			return 0, fmt.Errorf("%s: %s is not a number from 0 to 255", what, tok.String())
		}
		return uint8(n), nil
	}
	return 0, fmt.Errorf("%s: want a number, found %s", what, tok.Kind())
}

// properties reads the properties object into p.
func (lr *lineReader) properties(p *amqp.Publishing) error {
	if lr.dec.PeekKind() == 'n' {
		_, err := lr.dec.ReadToken()
		return err
	}
	if err := lr.open("properties"); err != nil {
		return err
	}
	for {
		name, more, err := lr.name()
		if err != nil || !more {
			return err
		}
		switch string(name) {
		case "content_type":
			p.ContentType, err = lr.text("properties.content_type")
		case "content_encoding":
			p.ContentEncoding, err = lr.text("properties.content_encoding")
		case "delivery_mode":
			p.DeliveryMode, err = lr.uint8Field("properties.delivery_mode")
		case "priority":
			p.Priority, err = lr.uint8Field("properties.priority")
		case "correlation_id":
			p.CorrelationId, err = lr.unique("properties.correlation_id")
		case "reply_to":
			p.ReplyTo, err = lr.text("properties.reply_to")
		case "expiration":
			p.Expiration, err = lr.text("properties.expiration")
		case "message_id":
			p.MessageId, err = lr.unique("properties.message_id")
		case "timestamp":
			if lr.dec.PeekKind() == 'n' {
				_, err = lr.dec.ReadToken()
				break
			}
			var s string
			if s, err = lr.text("properties.timestamp"); err == nil {
				if err = p.Timestamp.UnmarshalText([]byte(s)); err != nil {
					err = fmt.Errorf("properties.timestamp: %w", err)
				}
			}
		case "type":
			p.Type, err = lr.text("properties.type")
		case "user_id":
			p.UserId, err = lr.text("properties.user_id")
		case "app_id":
			p.AppId, err = lr.text("properties.app_id")
		default:
			err = unknownName("properties." + string(name))
		}
		if err != nil {
			return err
		}
	}
}

// table reads a table of typed values.
func (lr *lineReader) table(what string) (amqp.Table, error) {
	if err := lr.open(what); err != nil {
		return nil, err
	}
	var t amqp.Table
	if !lr.check {
		t = amqp.Table{}
	}
	for {
		name, more, err := lr.name()
		if err != nil || !more {
			return t, err
		}
		key := lr.intern(name)
		v, err := lr.typed()
		if err != nil {
			// A header of the message, or a field of a table in one.
			kind := "field"
			if what == "headers" {
				kind = "header"
			}
			return nil, fmt.Errorf("%s %q: %w", kind, key, err)
		}
		if t != nil {
			t[key] = v
		}
	}
}

// typed reads one {"type", "value"[, "encoding"]} object into the Go
// client's type for it. A value written before its type (not by warren,
// but JSON allows it) is kept raw and read once the type is known; a
// string's encoding is applied once the object is read.
func (lr *lineReader) typed() (any, error) {
	if err := lr.open(""); err != nil {
		return nil, err
	}
	var typ, encoding string
	var out any
	var raw jsontext.Value
	var seenType, seenValue bool
	var text string // a check's string value, kept unboxed
	for {
		name, more, err := lr.name()
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		switch string(name) {
		case "type":
			if typ, err = lr.typeName(); err == nil && typ == "" {
				err = errors.New("the type is empty")
			}
			seenType = true
		case "encoding":
			encoding, err = lr.text("encoding")
		case "value":
			seenValue = true
			if !seenType {
				raw, err = lr.dec.ReadValue()
				raw = raw.Clone()
				break
			}
			if lr.check && typ == "string" && lr.dec.PeekKind() == '"' {
				// What value would read, but nothing built of it.
				text, err = lr.str()
				break
			}
			out, err = lr.value(typ)
		default:
			err = unknownName(string(name))
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case !seenType:
		return nil, errors.New("a value without its type")
	case !seenValue:
		return nil, fmt.Errorf("a %s without its value", typ)
	case encoding != "" && (typ != "string" || encoding != "base64"):
		return nil, fmt.Errorf("a %s value with encoding %q: only a string has one, base64", typ, encoding)
	case raw != nil:
		sub := lineReader{check: lr.check}
		sub.dec.Reset(bytes.NewBuffer(raw))
		var err error
		if out, err = sub.value(typ); err != nil {
			return nil, err
		}
	}
	if encoding == "base64" {
		if s, ok := out.(string); ok {
			text = s
		}
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, fmt.Errorf("string value in base64: %w", err)
		}
		return string(b), nil
	}
	return out, nil
}

// typeName reads a type's name: one of types' own strings when it is
// one (no copy is made of it), else the name as it is, refused later.
func (lr *lineReader) typeName() (string, error) {
	if lr.dec.PeekKind() == '"' {
		raw, err := lr.dec.ReadValue()
		if err != nil {
			return "", err
		}
		if t, ok := typeNames[string(raw[1:len(raw)-1])]; ok {
			return t, nil
		}
		return unquote(raw), nil
	}
	return lr.text("type")
}

// typeNames are the field types a line names, each its own name.
var typeNames = map[string]string{}

func init() {
	for _, t := range []string{"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float32", "float64",
		"decimal", "string", "bytes", "timestamp", "table", "array", "void"} {
		typeNames[t] = t
	}
}

// value reads a value of type typ.
func (lr *lineReader) value(typ string) (any, error) {
	if _, ok := typeNames[typ]; !ok {
		return nil, fmt.Errorf("unknown field type %q", typ)
	}
	if typ == "void" {
		tok, err := lr.dec.ReadToken()
		if err == nil && tok.Kind() != 'n' {
			err = fmt.Errorf("void value %s: want null", tok.Kind())
		}
		return nil, err
	}
	switch typ {
	case "table":
		if lr.dec.PeekKind() != '{' {
			return nil, fmt.Errorf("table value: want an object, found %s", lr.dec.PeekKind())
		}
		return lr.table("")
	case "array":
		tok, err := lr.dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if tok.Kind() != '[' {
			return nil, fmt.Errorf("array value: want a list, found %s", tok.Kind())
		}
		var out []any
		if !lr.check {
			out = []any{}
		}
		for i := 0; lr.dec.PeekKind() != ']'; i++ {
			if lr.dec.PeekKind() != '{' {
				return nil, fmt.Errorf("[%d]: want a typed value, found %s", i, lr.dec.PeekKind())
			}
			v, err := lr.typed()
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			if out != nil {
				out = append(out, v)
			}
		}
		_, err = lr.dec.ReadToken()
		return out, err
	case "decimal":
		return lr.decimal()
	case "string":
		if lr.dec.PeekKind() == '"' {
			return lr.str()
		}
	}
	tok, err := lr.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	v, err := scalarOf(typ, tok)
	if err != nil {
		return nil, fmt.Errorf("%s value %s: %w", typ, tok.String(), err)
	}
	return v, nil
}

// decimal reads a decimal's {"scale", "value"}.
func (lr *lineReader) decimal() (amqp.Decimal, error) {
	var d amqp.Decimal
	if err := lr.open("decimal value"); err != nil {
		return d, err
	}
	var scale, value bool
	for {
		name, more, err := lr.name()
		if err != nil {
			return d, err
		}
		if !more {
			break
		}
		field := string(name)
		tok, err := lr.dec.ReadToken()
		if err != nil {
			return d, err
		}
		var n int64
		switch field {
		case "scale":
			n, err = number(tok, 8, false)
			d.Scale, scale = uint8(n), true
		case "value":
			n, err = number(tok, 32, true)
			d.Value, value = int32(n), true
		default:
			err = unknownName("decimal." + field)
		}
		if err != nil {
			return d, fmt.Errorf("decimal value: %w", err)
		}
	}
	if !scale || !value {
		return d, errors.New("decimal value: want both its scale and its value")
	}
	return d, nil
}

// scalarOf is the token tok as a value of type typ.
func scalarOf(typ string, tok jsontext.Token) (any, error) {
	kind := tok.Kind()
	switch typ {
	case "bool":
		if kind != 't' && kind != 'f' {
			return nil, errors.New("want true or false")
		}
		return tok.Bool(), nil
	case "int8":
		n, err := number(tok, 8, true)
		return int8(n), err
	case "uint8":
		n, err := number(tok, 8, false)
		return uint8(n), err
	case "int16":
		n, err := number(tok, 16, true)
		return int16(n), err
	case "uint16":
		n, err := number(tok, 16, false)
		return uint16(n), err
	case "int32":
		n, err := number(tok, 32, true)
		return int32(n), err
	case "uint32":
		n, err := number(tok, 32, false)
		return uint32(n), err
	case "int64":
		return number(tok, 64, true)
	case "float32", "float64":
		if kind != '0' {
			return nil, errors.New("want a number")
		}
		bits := 64
		if typ == "float32" {
			bits = 32
		}
		f, err := strconv.ParseFloat(tok.String(), bits)
		if err != nil {
			return nil, err
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	}
	if kind != '"' {
		return nil, errors.New("want a string")
	}
	s := tok.String()
	switch typ {
	case "string":
		return s, nil
	case "bytes":
		return base64.StdEncoding.DecodeString(s)
	}
	return time.Parse(time.RFC3339, s) // a timestamp
}

// number reads an integer of the given size, as encoding/json reads one
// into a Go integer: no fraction, no exponent, in range.
func number(tok jsontext.Token, bits int, signed bool) (int64, error) {
	if tok.Kind() != '0' {
		return 0, errors.New("want a number")
	}
	var n int64
	var err error
	if signed {
		n, err = strconv.ParseInt(tok.String(), 10, bits)
	} else {
		var u uint64
		u, err = strconv.ParseUint(tok.String(), 10, bits)
		n = int64(u)
	}
	switch {
	case errors.Is(err, strconv.ErrRange):
		return n, errors.New("out of range for its type")
	case err != nil:
		return n, errors.New("not a whole number of its type")
	}
	return n, nil
}
