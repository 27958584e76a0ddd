package dlq

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

func TestLogicalIDFollowsTheConfiguredSourceThenFallsBack(t *testing.T) {
	body := []byte(`{"event":{"id":"E-1","n":12,"ok":true,"nil":null,"obj":{}},"items":[{"sku":"A"},{"sku":"B"}],"id":"top"}`)
	hash := HashID(body)
	tests := []struct {
		name     string
		spec     string
		msgID    string
		h        amqp.Table
		body     []byte
		want     string
		wantFrom domain.IDSource
	}{
		{"message_id by default", "", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"message_id configured", "message_id", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"header string", "header:event_id", "m-1", amqp.Table{"event_id": "E-7"}, body, "E-7", domain.IDHeader},
		{"header bytes", "header:event_id", "", amqp.Table{"event_id": []byte("E-8")}, body, "E-8", domain.IDHeader},
		{"header integer", "header:event_id", "", amqp.Table{"event_id": int64(99)}, body, "99", domain.IDHeader},
		{"header missing falls back to message_id", "header:event_id", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"header empty falls back", "header:event_id", "m-1", amqp.Table{"event_id": ""}, body, "m-1", domain.IDMessageID},
		{"header a table falls back", "header:event_id", "m-1", amqp.Table{"event_id": amqp.Table{"a": 1}}, body, "m-1", domain.IDMessageID},
		{"header too long falls back", "header:event_id", "m-1", amqp.Table{"event_id": strings.Repeat("x", 600)}, body, "m-1", domain.IDMessageID},
		{"json nested key", "json:event.id", "m-1", nil, body, "E-1", domain.IDJSON},
		{"json top level", "json:id", "", nil, body, "top", domain.IDJSON},
		{"json with $ and brackets", "json:$.items[1].sku", "", nil, body, "B", domain.IDJSON},
		{"json dotted index", "json:items.0.sku", "", nil, body, "A", domain.IDJSON},
		{"json number keeps its text", "json:event.n", "", nil, body, "12", domain.IDJSON},
		{"json bool", "json:event.ok", "", nil, body, "true", domain.IDJSON},
		{"json null falls back", "json:event.nil", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"json object falls back", "json:event.obj", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"json missing key falls back", "json:event.nope", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"json index out of range", "json:items.5.sku", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"json not JSON", "json:id", "m-1", nil, []byte("\x00\xffnot json"), "m-1", domain.IDMessageID},
		{"json truncated", "json:event.id", "m-1", nil, []byte(`{"event":{"i`), "m-1", domain.IDMessageID},
		{"json empty path", "json:$", "m-1", nil, body, "m-1", domain.IDMessageID},
		{"nothing: content hash, marked", "", "", nil, body, hash, domain.IDHash},
		{"json missing and no message_id: content hash", "json:x", "", nil, body, hash, domain.IDHash},
		{"unknown spec behaves as message_id", "bogus", "m-1", nil, body, "m-1", domain.IDMessageID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from := LogicalID(tt.spec, tt.msgID, tt.h, tt.body)
			if got != tt.want || from != tt.wantFrom {
				t.Errorf("LogicalID = %q (%s), want %q (%s)", got, from, tt.want, tt.wantFrom)
			}
		})
	}
}

func TestHashIDIsShortStableAndMarked(t *testing.T) {
	a, b := HashID([]byte("x")), HashID([]byte("x"))
	if a != b || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+16 {
		t.Errorf("HashID = %q, %q", a, b)
	}
	if HashID([]byte("y")) == a {
		t.Error("different bodies share a hash ID")
	}
}
