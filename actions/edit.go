package actions

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// ActionEdit resubmits one dead letter as the operator edited it
// (docs/ARCHITECTURE.md §4.11).
const ActionEdit = "edit"

// HeaderEditedFrom marks an edited copy with the hex sha256 of the body it
// replaces, so a consumer (or an auditor) can tell it from the original.
const HeaderEditedFrom = "x-warren-edited-from"

// How the edit document carries the body.
const (
	BodyJSON   = "json"   // the body is the JSON value itself
	BodyText   = "text"   // the body is a JSON string
	BodyBase64 = "base64" // the body is not UTF-8: a base64 string
)

// editDoc is the file the operator's editor opens: the application
// headers, how the body is written, and the body.
type editDoc struct {
	Headers    json.RawMessage `json:"headers"`
	BodyFormat string          `json:"body_format"`
	Body       json.RawMessage `json:"body"`
}

// Editable reports whether a header is the application's: the broker's
// dead-lettering headers and warren's own stay as they are and are not in
// the edit document.
func Editable(name string) bool {
	switch {
	case name == domain.HeaderDeath, name == "x-delivery-count", name == "x-acquired-count",
		strings.HasPrefix(name, "x-first-death-"), strings.HasPrefix(name, "x-last-death-"),
		strings.HasPrefix(name, "x-warren-"):
		return false
	}
	return true
}

// EditDocument is what the operator edits for d: a JSON document with the
// application headers, the body format and the body. A UTF-8 JSON body
// is embedded as JSON, other UTF-8 text as a string, anything else as
// base64.
func EditDocument(d domain.DeadLetter) ([]byte, error) {
	headers, err := json.Marshal(plainApp(d.Headers))
	if err != nil {
		return nil, fmt.Errorf("headers of %s cannot be written as JSON: %w", d.MessageID, err)
	}
	doc := editDoc{Headers: headers}
	switch {
	case utf8JSON(d.Body):
		doc.BodyFormat, doc.Body = BodyJSON, d.Body
	case isUTF8(d.Body):
		doc.BodyFormat = BodyText
		doc.Body, _ = json.Marshal(string(d.Body)) // a string always encodes
	default:
		doc.BodyFormat = BodyBase64
		doc.Body, _ = json.Marshal(base64.StdEncoding.EncodeToString(d.Body))
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Edited is a dead letter as the operator edited it.
type Edited struct {
	Body []byte
	// Headers are the application headers to send; an unchanged value
	// keeps its AMQP type (a timestamp stays a timestamp).
	Headers amqp.Table
}

// EditError is an edit document that cannot be read; nothing is sent.
type EditError struct{ Err error }

func (e *EditError) Error() string { return e.Err.Error() }
func (e *EditError) Unwrap() error { return e.Err }

// ParseEdit reads the edited document of d.
func ParseEdit(d domain.DeadLetter, text []byte) (Edited, error) {
	bad := func(format string, a ...any) (Edited, error) {
		return Edited{}, &EditError{fmt.Errorf(format, a...)}
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var doc editDoc
	if err := dec.Decode(&doc); err != nil {
		return bad("the edited file is not valid JSON: %s", jsonErr(text, err))
	}
	if dec.More() {
		return bad("the edited file holds more than one JSON document")
	}
	var edited Edited
	var err error
	if edited.Body, err = editedBody(d.Body, doc); err != nil {
		return Edited{}, &EditError{err}
	}
	if edited.Headers, err = editedHeaders(d.Headers, doc.Headers); err != nil {
		return Edited{}, &EditError{err}
	}
	return edited, nil
}

func editedBody(orig []byte, doc editDoc) ([]byte, error) {
	if len(doc.Body) == 0 {
		return nil, errors.New(`"body" is missing: write the body, or "" for an empty one`)
	}
	switch doc.BodyFormat {
	case BodyJSON:
		var b bytes.Buffer
		if err := json.Compact(&b, doc.Body); err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		// Unchanged JSON keeps its bytes exactly, whitespace included.
		if utf8JSON(orig) {
			var o bytes.Buffer
			if json.Compact(&o, orig) == nil && bytes.Equal(o.Bytes(), b.Bytes()) {
				return orig, nil
			}
		}
		return b.Bytes(), nil
	case BodyText, BodyBase64:
		var s string
		if err := json.Unmarshal(doc.Body, &s); err != nil {
			return nil, fmt.Errorf(`body must be a JSON string with body_format %q`, doc.BodyFormat)
		}
		if doc.BodyFormat == BodyText {
			return []byte(s), nil
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("body is not valid base64: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("body_format must be %s, %s or %s, found %q", BodyJSON, BodyText, BodyBase64, doc.BodyFormat)
}

func editedHeaders(orig amqp.Table, raw json.RawMessage) (amqp.Table, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var h map[string]any
	if err := dec.Decode(&h); err != nil {
		return nil, errors.New(`headers must be a JSON object of "name": value`)
	}
	was := plainApp(orig)
	out := make(amqp.Table, len(h))
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if !Editable(k) {
			return nil, fmt.Errorf("header %s is the broker's or warren's and cannot be edited; remove it from the file", k)
		}
		v := amqpValue(h[k])
		if o, ok := orig[k]; ok {
			if _, app := was[k]; app {
				v = typedLike(o, h[k])
			}
		}
		out[k] = v
	}
	return out, nil
}

// typedLike is the AMQP value of now, an edited header's decoded JSON,
// whose original was orig: orig itself where now still equals its JSON
// form, so an unchanged value keeps its AMQP type (a timestamp, bytes, a
// decimal); inside a table or an array the same holds for each field or
// element left as it was, so editing one field of a table does not turn
// its others into JSON's strings and numbers.
func typedLike(orig, now any) any {
	if jsonEqual(domain.Plain(orig), now) {
		return orig
	}
	switch o := orig.(type) {
	case amqp.Table:
		if n, ok := now.(map[string]any); ok {
			t := make(amqp.Table, len(n))
			for k, e := range n {
				if ov, had := o[k]; had {
					t[k] = typedLike(ov, e)
				} else {
					t[k] = amqpValue(e)
				}
			}
			return t
		}
	case []any:
		if n, ok := now.([]any); ok {
			out := make([]any, len(n))
			for i, e := range n {
				if i < len(o) {
					out[i] = typedLike(o[i], e)
				} else {
					out[i] = amqpValue(e)
				}
			}
			return out
		}
	case int32, int16, int8:
		// A new integer keeps the original's width where it fits.
		if n, ok := now.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				switch orig.(type) {
				case int32:
					if i == int64(int32(i)) {
						return int32(i)
					}
				case int16:
					if i == int64(int16(i)) {
						return int16(i)
					}
				case int8:
					if i == int64(int8(i)) {
						return int8(i)
					}
				}
			}
		}
	}
	return amqpValue(now)
}

// amqpValue turns a decoded JSON value into one an AMQP table carries:
// integers as int64, other numbers as float64, objects as tables.
func amqpValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		t := make(amqp.Table, len(x))
		for k, e := range x {
			t[k] = amqpValue(e)
		}
		return t
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = amqpValue(e)
		}
		return out
	}
	return v
}

// Changed reports whether e differs from d in body or application
// headers.
func (e Edited) Changed(d domain.DeadLetter) bool {
	return !bytes.Equal(e.Body, d.Body) || !reflect.DeepEqual(map[string]any(e.Headers), map[string]any(appHeaders(d.Headers)))
}

// Diff is a unified diff of the application headers and of the body, the
// original against the edit; a JSON body is compared indented.
func (e Edited) Diff(d domain.DeadLetter) string {
	var b strings.Builder
	b.WriteString(udiff.Unified("headers (original)", "headers (edited)", headersText(d.Headers), headersText(e.Headers)))
	b.WriteString(udiff.Unified("body (original)", "body (edited)", bodyText(d.Body), bodyText(e.Body)))
	return b.String()
}

// headers is what the copy carries: the original's headers that are not
// the application's, and the edited application headers.
func (e Edited) headers(orig amqp.Table) amqp.Table {
	h := make(amqp.Table, len(orig)+len(e.Headers)+1)
	for k, v := range orig {
		if !Editable(k) {
			h[k] = v
		}
	}
	maps.Copy(h, e.Headers)
	return h
}

// Sha256Hex is the hex sha256 of body, as HeaderEditedFrom carries it.
func Sha256Hex(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// NewEditPlan is the plan of resubmitting e in place of d, held from
// queue in vhost: to where a replay would send d (its origin queue,
// through the default exchange), with d removed once the copy is
// confirmed.
func NewEditPlan(vhost, queue string, d domain.DeadLetter, e Edited) (*Plan, error) {
	req := Request{Action: ActionReplay, Vhost: vhost, Queue: queue, Release: true}
	dest, skip, _ := req.Decide(d, nil)
	if skip != Selected {
		return nil, &RequestError{fmt.Errorf("message %s has no origin queue to resubmit to (it carries no death in another queue than %s)", d.LogicalID, queue)}
	}
	size := int64(len(e.Body))
	return &Plan{
		Action: ActionEdit, Vhost: vhost, Queue: queue, Release: d.Quarantined,
		Items:  []Item{{Letter: d, Dest: dest, Edit: &e}},
		Groups: []Group{{Dest: dest, Count: 1, Bytes: size}},
		Bytes:  size,
	}, nil
}

// source is the letter the item's copy is made from: the edited body and
// headers in place of the original's, marked with the original's hash.
func (it Item) source() domain.DeadLetter {
	d := it.Letter
	if it.Edit == nil {
		return d
	}
	h := it.Edit.headers(d.Headers)
	h[HeaderEditedFrom] = Sha256Hex(d.Body)
	d.Body, d.Headers = it.Edit.Body, h
	return d
}

func appHeaders(h amqp.Table) amqp.Table {
	out := amqp.Table{}
	for k, v := range h {
		if Editable(k) {
			out[k] = v
		}
	}
	return out
}

func plainApp(h amqp.Table) map[string]any {
	return domain.PlainHeaders(appHeaders(h))
}

func headersText(h amqp.Table) string {
	b, err := json.MarshalIndent(plainApp(h), "", "  ")
	if err != nil {
		return fmt.Sprintf("(headers not shown: %v)\n", err)
	}
	return string(b) + "\n"
}

func bodyText(body []byte) string {
	var b bytes.Buffer
	switch {
	case utf8JSON(body) && json.Indent(&b, body, "", "  ") == nil:
		return b.String() + "\n"
	case isUTF8(body):
		s := string(body)
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		return s
	}
	enc := base64.StdEncoding.EncodeToString(body)
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	return b.String() + enc + "\n"
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(normalise(b))
	if err1 != nil || err2 != nil {
		return false
	}
	var u, v any
	return json.Unmarshal(x, &u) == nil && json.Unmarshal(y, &v) == nil && reflect.DeepEqual(u, v)
}

// normalise turns json.Number back into the float64 a plain decode gives,
// so values compare by what they are, not how they were decoded.
func normalise(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}

func utf8JSON(b []byte) bool { return len(b) > 0 && isUTF8(b) && json.Valid(b) }

func isUTF8(b []byte) bool { return utf8.Valid(b) }

// jsonErr is a decoding error with the line it happened on.
func jsonErr(text []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(text[:min(int(se.Offset), len(text))], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s, found %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}
