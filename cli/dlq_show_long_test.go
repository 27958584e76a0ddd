package cli

import (
	"bytes"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// A header of 120 000 characters must not print on one line: dlq show's
// text shows its first KiB and says how long it is and where to read it
// whole; a short header prints as it is.
func TestDlqShowTextCutsALongHeaderValueAndStatesItsLength(t *testing.T) {
	long := strings.Repeat("é", 119_999) + "\x1b"
	r := listed{DeadLetter: domain.DeadLetter{
		MessageID: "m-1", LogicalID: "E-1", DeliveryCount: -1, AcquiredCount: -1, Headroom: -1,
		Headers: amqp.Table{"trace": long, "event_id": "E-1"},
		Body:    []byte(`{}`),
	}}
	var b bytes.Buffer
	writeShowText(&b, r)
	var trace string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "header trace") {
			trace = l
		}
		if strings.HasPrefix(l, "header event_id") && !strings.HasSuffix(l, " E-1") {
			t.Errorf("a short header changed: %q", l)
		}
	}
	want := strings.Repeat("é", 1024) + "… (120000 characters, warren dlq show --json gives it whole)"
	if !strings.HasSuffix(trace, want) {
		t.Fatalf("the trace header line (%d bytes) does not end with the first KiB and the note:\n%.200q…", len(trace), trace)
	}
	if len(trace) > 3000 {
		t.Errorf("the trace header line is %d bytes long", len(trace))
	}
}
