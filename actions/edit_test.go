package actions

import (
	"bytes"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// Editing one field of a table header leaves its other fields as the
// original had them, AMQP types included: the diff shows them unchanged,
// so the consumer must get them unchanged, not as JSON's strings.
func TestEditingOneFieldOfATableKeepsTheOthersTypes(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	d := domain.DeadLetter{MessageID: "m-1", Body: []byte(`{"total":1}`), Headers: amqp.Table{
		"trace":  amqp.Table{"n": int32(1), "at": at, "raw": []byte{0xff, 0x00}},
		"hops":   []any{at, int64(7)},
		"tenant": "acme",
	}}
	doc, err := EditDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	edited, err := ParseEdit(d, bytes.Replace(doc, []byte(`"n": 1`), []byte(`"n": 2`), 1))
	if err != nil {
		t.Fatal(err)
	}
	trace, ok := edited.Headers["trace"].(amqp.Table)
	if !ok {
		t.Fatalf("trace is %T, want a table", edited.Headers["trace"])
	}
	if trace["n"] != int32(2) {
		t.Errorf("trace.n = %#v, want the edited 2, still a 32-bit integer", trace["n"])
	}
	if got, ok := trace["at"].(time.Time); !ok || !got.Equal(at) {
		t.Errorf("trace.at = %#v, want the original timestamp", trace["at"])
	}
	if got, ok := trace["raw"].([]byte); !ok || !bytes.Equal(got, []byte{0xff, 0x00}) {
		t.Errorf("trace.raw = %#v, want the original bytes", trace["raw"])
	}
	if hops, ok := edited.Headers["hops"].([]any); !ok || len(hops) != 2 || hops[0] != any(at) {
		t.Errorf("hops = %#v, want the original array untouched", edited.Headers["hops"])
	}
	if edited.Headers["tenant"] != "acme" {
		t.Errorf("tenant = %#v", edited.Headers["tenant"])
	}
}
