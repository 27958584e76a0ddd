package dlqfile

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestEveryFieldTypeComesBackAsItWent(t *testing.T) {
	in := amqp.Table{
		"bool": true, "int8": int8(-8), "uint8": uint8(8), "int16": int16(-16), "uint16": uint16(16),
		"int32": int32(-32), "uint32": uint32(32), "int64": int64(math.MinInt64), "float32": float32(1.5), "float64": 2.25,
		"decimal": amqp.Decimal{Scale: 2, Value: 1999}, "bytes": []byte{0, 0xff}, "string": "é\x00", "not-utf8": "a\xff\xfeb",
		"timestamp": time.Unix(1700000000, 0).UTC(), "void": nil,
		"table": amqp.Table{"deeper": amqp.Table{"ok": false}}, "array": []any{"a", int32(2), []any{}},
	}
	enc, err := EncodeTable(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeTable(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("came back as %#v\nwant %#v", out, in)
	}
	if _, err := Encode(math.NaN()); err == nil {
		t.Error("NaN encoded: JSON has no form for it")
	}
	if _, err := Decode(Value{Type: "uuid", Value: []byte(`"x"`)}); err == nil || !strings.Contains(err.Error(), "uuid") {
		t.Errorf("an unknown type: %v", err)
	}
	if _, err := Decode(Value{Type: "int8", Value: []byte(`300`)}); err == nil {
		t.Error("300 read as an int8")
	}
}

func TestAReaderRefusesWhatIsNotAnExportAndNamesTheLine(t *testing.T) {
	for _, text := range []string{"", "{}\n", `{"format":"other"}` + "\n", `{"format":"warren-dlq-export","version":9}` + "\n"} {
		if _, err := NewReader(strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: %v, want a refusal naming line 1", text, err)
		}
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	e := NewEncoder(gz)
	if err := e.Header(Header{Queue: "q", Count: 2}); err != nil {
		t.Fatal(err)
	}
	m := Message{LogicalID: "E-1", Body: "Ym9keQ==", BodySHA256: Digest([]byte("body"))}
	if err := e.Message(m); err != nil {
		t.Fatal(err)
	}
	m.BodySHA256 = Digest([]byte("other"))
	if err := e.Message(m); err != nil {
		t.Fatal(err)
	}
	gz.Write([]byte("not json\n"))
	gz.Close()
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatalf("a gzipped export: %v", err)
	}
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := first.Publishing(); err != nil || string(p.Body) != "body" {
		t.Errorf("line 2: %v %q", err, p.Body)
	}
	second, _ := r.Next()
	if _, err := second.Publishing(); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a body whose sha256 does not match: %v", err)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("a line that does not parse: %v, want it named", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last line: %v", err)
	}
}
