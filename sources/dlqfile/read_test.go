package dlqfile

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// everyType is a header of every AMQP field type the Go client reads.
func everyType() amqp.Table {
	return amqp.Table{
		"bool": true, "int8": int8(-8), "uint8": uint8(8), "int16": int16(-16), "uint16": uint16(16),
		"int32": int32(-32), "uint32": uint32(32), "int64": int64(math.MinInt64), "float32": float32(1.5), "float64": 2.25,
		"decimal": amqp.Decimal{Scale: 2, Value: 1999}, "bytes": []byte{0, 0xff}, "string": "é\x00\"\\\n\u2028", "not-utf8": "a\xff\xfeb",
		"timestamp": time.Unix(1700000000, 0).UTC(), "void": nil,
		"table": amqp.Table{"deeper": amqp.Table{"ok": false}}, "array": []any{"a", int32(2), []any{}, amqp.Table{}},
	}
}

// lineOf is the line warren writes for a message with headers h and body.
func lineOf(t *testing.T, h amqp.Table, body []byte) []byte {
	t.Helper()
	enc, err := EncodeTable(h)
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		enc = nil
	}
	ts := time.Unix(1700000000, 0).UTC()
	return appendMessage(nil, Message{LogicalID: "E-1", Group: "g", Reason: "rejected", OriginQueue: "orders", RoutingKey: "orders",
		Properties: Properties{ContentType: "application/json", DeliveryMode: 2, Priority: 9, MessageID: "m-1", Timestamp: &ts, AppID: "app"},
		Headers:    enc, Body: base64.StdEncoding.EncodeToString(body), BodySHA256: Digest(body)})
}

func TestEveryFieldTypeComesBackAsItWent(t *testing.T) {
	in := everyType()
	body := []byte{0, 1, 0xff, '"', '\n'}
	var lr lineReader
	got, err := lr.entry(lineOf(t, in, body))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Publishing.Headers, in) {
		t.Errorf("came back as %#v\nwant %#v", got.Publishing.Headers, in)
	}
	p := got.Publishing
	if string(p.Body) != string(body) || p.MessageId != "m-1" || p.Priority != 9 || p.DeliveryMode != 2 || p.AppId != "app" ||
		!p.Timestamp.Equal(time.Unix(1700000000, 0)) || got.LogicalID != "E-1" || got.RoutingKey != "orders" {
		t.Errorf("read back as %+v", got)
	}
	if _, err := Encode(math.NaN()); err == nil {
		t.Error("NaN encoded: JSON has no form for it")
	}
}

// The reader and encoding/json read warren's lines, and the same lines
// written otherwise (spaces, another order, escapes, nulls), alike.
func TestTheReaderReadsLinesAsEncodingJSONDoes(t *testing.T) {
	body := `"Ym9keQ=="`
	bodySum := `"230d8358dc8e8890b4c58deeb62912ee2f20357ae92a5cc861b98e68fe31acb5"`
	for name, line := range map[string]string{
		"warren's":          string(lineOf(t, everyType(), []byte("body"))),
		"no headers":        string(lineOf(t, nil, nil)),
		"spaces":            ` { "logical_id" : "E" , "headers" : { "a" : { "type" : "int8" , "value" : -1 } } , "body_base64" : ` + body + ` , "body_sha256" : ` + bodySum + ` } `,
		"another order":     `{"body_sha256":` + bodySum + `,"body_base64":` + body + `,"headers":{"a":{"value":{"n":{"value":7,"type":"int32"}},"type":"table"}},"properties":{"timestamp":"2026-01-02T03:04:05+02:00","priority":1},"logical_id":"E"}`,
		"encoding first":    `{"headers":{"s":{"encoding":"base64","type":"string","value":"/w=="}},"body_base64":` + body + `,"body_sha256":` + bodySum + `}`,
		"encoding last":     `{"headers":{"s":{"type":"string","value":"/w==","encoding":"base64"}},"body_base64":` + body + `,"body_sha256":` + bodySum + `}`,
		"escapes":           `{"logical_id":"\u00e9\ud83d\ude00\"","headers":{"k\n":{"type":"string","value":"\u2028"}},"body_base64":"Ym9\u006beQ==","body_sha256":` + bodySum + `}`,
		"nulls":             `{"logical_id":null,"properties":null,"headers":null,"body_base64":` + body + `,"body_sha256":` + bodySum + `}`,
		"null properties":   `{"properties":{"content_type":null,"delivery_mode":null},"headers":{},"body_base64":` + body + `,"body_sha256":` + bodySum + `}`,
		"decimal and array": `{"headers":{"d":{"type":"decimal","value":{"value":-5,"scale":3}},"l":{"type":"array","value":[{"type":"void","value":null},{"type":"float32","value":1e-3}]}},"body_base64":` + body + `,"body_sha256":` + bodySum + `}`,
	} {
		var lr lineReader
		got, err := lr.entry([]byte(line))
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, line)
			continue
		}
		want, err := referenceEntry([]byte(line))
		if err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		if !sameEntry(got, want) {
			t.Errorf("%s: read as\n%#v\nencoding/json reads\n%#v", name, got, want)
		}
	}
}

// sameEntry compares two readings, a timestamp by the instant and offset
// it names.
func sameEntry(a, b Entry) bool {
	ta, tb := a.Publishing.Timestamp, b.Publishing.Timestamp
	_, oa := ta.Zone()
	_, ob := tb.Zone()
	if !ta.Equal(tb) || oa != ob {
		return false
	}
	if string(a.Publishing.Body) != string(b.Publishing.Body) {
		return false
	}
	a.Publishing.Timestamp, b.Publishing.Timestamp = time.Time{}, time.Time{}
	a.Publishing.Body, b.Publishing.Body = nil, nil // no body and an empty one alike
	return reflect.DeepEqual(a, b)
}

// What no warren writes is refused, naming what was wrong.
func TestTheReaderRefusesWhatNoWarrenWrote(t *testing.T) {
	const tail = `"body_base64":"Ym9keQ==","body_sha256":"230d8358dc8e8890b4c58deeb62912ee2f20357ae92a5cc861b98e68fe31acb5"}`
	for _, tt := range []struct{ line, want string }{
		{`[]`, "want an object"},
		{`{"logical_id":"E",` + tail + `{}`, "more than one JSON value"},
		{`{"logical_id":"E","Logical_ID":"F",` + tail, `"Logical_ID" is not a field`},
		{`{"logical_id":"E","logical_id":"F",` + tail, "duplicate"},
		{"{\"logical_id\":\"\xff\"," + tail, "UTF-8"},
		{`{"properties":{"priority":256},` + tail, "properties.priority: 256"},
		{`{"properties":{"priority":1.0},` + tail, "properties.priority"},
		{`{"properties":{"timestamp":"yesterday"},` + tail, "properties.timestamp"},
		{`{"properties":{"color":"red"},` + tail, `"properties.color" is not a field`},
		{`{"headers":{"a":{"type":"int8","value":300}},` + tail, `header "a": int8 value 300`},
		{`{"headers":{"a":{"type":"int8","value":1e1}},` + tail, `header "a": int8 value 1e1`},
		{`{"headers":{"a":{"type":"int8","value":null}},` + tail, `header "a": int8 value null`},
		{`{"headers":{"a":{"type":"int8"}},` + tail, `header "a": a int8 without its value`},
		{`{"headers":{"a":{"value":1}},` + tail, `header "a": a value without its type`},
		{`{"headers":{"a":{"type":"uuid","value":"x"}},` + tail, `unknown field type "uuid"`},
		{`{"headers":{"a":{"type":"void","value":1}},` + tail, "want null"},
		{`{"headers":{"a":{"type":"bytes","value":"AA==","encoding":"base64"}},` + tail, `encoding "base64": only a string`},
		{`{"headers":{"a":{"type":"string","value":"x","encoding":"hex"}},` + tail, `encoding "hex"`},
		{`{"headers":{"a":{"type":"table","value":{"b":{"type":"bool","value":"yes"}}}},` + tail, `field "b": bool value`},
		{`{"headers":{"a":{"type":"array","value":[{"type":"int64","value":"1"}]}},` + tail, `[0]: int64 value`},
		{`{"headers":{"a":{"type":"decimal","value":{"scale":2}}},` + tail, "decimal value: want both"},
		{`{"body_base64":"not base64!","body_sha256":"00"}`, "body_base64: illegal base64"},
		{`{"body_base64":"Ym9keQ=="}`, "no body_sha256"},
		{`{"body_base64":"Ym9keQ==","body_sha256":"00"}`, "the body was changed"},
		{`{"logical_id":"E"`, "not a message line"},
	} {
		var lr lineReader
		_, err := lr.entry([]byte(tt.line))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.line, err, tt.want)
		}
	}
}

// Whatever line the reader accepts, encoding/json reads the same; what
// encoding/json refuses, the reader refuses.
func FuzzTheReaderAgreesWithEncodingJSON(f *testing.F) {
	f.Add([]byte(`{"logical_id":"E","headers":{"a":{"value":{"n":{"value":7,"type":"int32"}},"type":"table"},"s":{"type":"string","value":"/w==","encoding":"base64"}},"body_base64":"Ym9keQ==","body_sha256":"230d8358dc8e8890b4c58deeb62912ee2f20357ae92a5cc861b98e68fe31acb5"}`))
	f.Add([]byte(`{"properties":{"content_type":"a","delivery_mode":2,"timestamp":"2026-01-02T03:04:05Z"},"headers":{"d":{"type":"decimal","value":{"scale":1,"value":2}},"t":{"type":"timestamp","value":"2026-01-02T03:04:05Z"},"b":{"type":"bytes","value":"AA=="},"f":{"type":"float64","value":0.5}},"body_base64":"","body_sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}`))
	// Lines whose body and headers are long enough to be cut out, and
	// lines where the patterns stand where no body or headers are.
	long := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("body"), 30))
	longSum := Digest(bytes.Repeat([]byte("body"), 30))
	hdrs := `{"x-death":{"type":"array","value":[{"type":"table","value":{"count":{"type":"int64","value":1},"queue":{"type":"string","value":"orders"}}}]}}`
	f.Add([]byte(`{"logical_id":"E","headers":` + hdrs + `,"body_base64":"` + long + `","body_sha256":"` + longSum + `"}`))
	f.Add([]byte(`{"body_sha256":"` + longSum + `","body_base64":"` + long + `","headers":` + hdrs + `}`))
	f.Add([]byte(`{"properties":{"headers":` + hdrs + `},"headers":` + hdrs + `,"body_base64":"` + long + `","body_sha256":"` + longSum + `"}`))
	f.Add([]byte(`{"headers":{"a":{"type":"table","value":{"headers":` + hdrs + `}}},"body_base64":"` + long + `","body_sha256":"` + longSum + `"}`))
	f.Add([]byte(`{"x\"headers":` + hdrs + `,"k\"body_base64":"` + long + `","body_base64":"` + long + `","body_sha256":"` + longSum + `"}`))
	f.Add([]byte(`{"headers":` + hdrs + `,"headers":` + hdrs + `,"body_base64":"` + long + `","body_base64":"` + long + `"}`))
	f.Add([]byte(`{"logical_id":"\"body_base64\":\"` + long + `\"","body_base64":"` + long + `=","body_sha256":"` + longSum + `"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var lr lineReader
		got, err := lr.entry(line)
		// Values cut out or not, a line reads the same, or is refused in
		// the same words.
		whole := lineReader{noSplice: true}
		wholeGot, wholeErr := whole.entry(line)
		if fmt.Sprint(err) != fmt.Sprint(wholeErr) || err == nil && !sameEntry(got, wholeGot) {
			t.Fatalf("%q: read as %#v (%v), whole as %#v (%v)", line, got, err, wholeGot, wholeErr)
		}
		// A check refuses what the reading refuses, in the same words.
		check := lineReader{check: true}
		checked, checkErr := check.entry(line)
		if fmt.Sprint(err) != fmt.Sprint(checkErr) || err == nil && (checked.Size != got.Size || checked.LogicalID != got.LogicalID) {
			t.Fatalf("%q: read with %v, checked with %v", line, err, checkErr)
		}
		// Read again by the same reader, its headers may be the line
		// before's: the same reading.
		again, againErr := lr.entry(line)
		if fmt.Sprint(err) != fmt.Sprint(againErr) || err == nil && !sameEntry(got, again) {
			t.Fatalf("%q: read with %v, then with %v", line, err, againErr)
		}
		want, refErr := referenceEntry(line)
		switch {
		case err == nil && refErr != nil:
			t.Fatalf("the reader accepts what encoding/json refuses (%v): %q", refErr, line)
		case err == nil && !sameEntry(got, want):
			t.Fatalf("%q read as\n%#v\nencoding/json reads\n%#v", line, got, want)
		}
	})
}

// Headers of the same bytes as the line before's are cut out of a line
// before it is tokenized, and the line reads as a whole reading reads it.
func TestHeadersOfTheLineBeforeAreNotTokenizedAgain(t *testing.T) {
	h := amqp.Table{"x-death": []any{amqp.Table{"count": int64(1), "queue": "orders", "reason": "rejected", "time": time.Unix(1700000000, 0).UTC()}},
		"x-first-death-queue": "orders"}
	line := lineOf(t, h, bytes.Repeat([]byte("x"), 1024))
	var lr, whole lineReader
	whole.noSplice = true
	want, err := whole.entry(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := lr.entry(line)
		if err != nil || !sameEntry(got, want) {
			t.Fatalf("read %d: %#v (%v), want %#v", i+1, got, err, want)
		}
		if cut := bytes.Contains(lr.line, []byte(`"headers":{}`)); cut != (i == 1) {
			t.Fatalf("read %d: headers cut out %t, want %t; the decoder read %s", i+1, cut, i == 1, lr.line)
		}
	}
	// Shared, as the line before's: a walk only reads them.
	again, _ := lr.entry(line)
	if reflect.ValueOf(again.Publishing.Headers).UnsafePointer() != reflect.ValueOf(lr.last).UnsafePointer() {
		t.Fatal("headers cut out are not the line before's table")
	}
}

// BenchmarkReadLine reads lines of messages the broker dead-lettered
// once (x-death and the x-first-death headers), with a 1 KiB body; each
// line's headers differ from the line before (their x-death times), so
// none is the table of the line before.
func BenchmarkReadLine(b *testing.B) {
	var lines [][]byte
	for i := range 2 {
		at := time.Unix(1700000000+int64(i), 0).UTC()
		h := amqp.Table{
			"x-death": []any{amqp.Table{"count": int64(1), "exchange": "", "queue": "orders", "reason": "rejected",
				"routing-keys": []any{"orders"}, "time": at}},
			"x-first-death-exchange": "", "x-first-death-queue": "orders", "x-first-death-reason": "rejected",
		}
		lines = append(lines, lineOf(&testing.T{}, h, bytes.Repeat([]byte("x"), 1024)))
	}
	// read: as an import publishes it; check: as its check reads it.
	for _, check := range []bool{false, true} {
		name := "read"
		if check {
			name = "check"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(lines[0])))
			b.ReportAllocs()
			lr := lineReader{check: check}
			i := 0
			for b.Loop() {
				if _, err := lr.entry(lines[i%2]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// Lines whose headers are the same bytes share one table; a line whose
// headers differ, or are not an object, is read on its own.
func TestHeadersOfTheSameBytesAreReadOnce(t *testing.T) {
	h := everyType()
	var lr lineReader
	first, err := lr.entry(lineOf(t, h, []byte("a")))
	if err != nil {
		t.Fatal(err)
	}
	second, err := lr.entry(lineOf(t, h, []byte("b")))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(first.Publishing.Headers).UnsafePointer() != reflect.ValueOf(second.Publishing.Headers).UnsafePointer() ||
		!reflect.DeepEqual(second.Publishing.Headers, h) {
		t.Errorf("the second line's headers were read again, or read wrong: %v", second.Publishing.Headers)
	}
	h["int8"] = int8(7)
	third, err := lr.entry(lineOf(t, h, []byte("c")))
	if err != nil || !reflect.DeepEqual(third.Publishing.Headers, h) || third.Publishing.Headers["int8"] == first.Publishing.Headers["int8"] {
		t.Errorf("headers that differ came back as %v (%v)", third.Publishing.Headers, err)
	}
	// An empty table read, then a string holding the same bytes: refused.
	if _, err := lr.entry(lineOf(t, amqp.Table{}, []byte("d"))); err != nil {
		t.Fatal(err)
	}
	line := bytes.Replace(lineOf(t, amqp.Table{}, []byte("e")), []byte(`"headers":{}`), []byte(`"headers":"{}"`), 1)
	if _, err := lr.entry(line); err == nil || !strings.Contains(err.Error(), "want an object") {
		t.Errorf("headers that are a string holding {}: %v, want refused", err)
	}
}
