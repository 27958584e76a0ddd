package actions

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

func TestCopyKeepsPropertiesHeadersAndBody(t *testing.T) {
	ts := time.Date(2024, 5, 1, 3, 15, 2, 0, time.UTC)
	d := domain.DeadLetter{
		ReplayCount: 2,
		Properties: domain.Properties{
			ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 4,
			CorrelationID: "corr", ReplyTo: "replies", MessageID: "m1", Timestamp: ts,
			Type: "order.created", AppID: "shop", UserID: "guest",
		},
		Headers: amqp.Table{"x-death": []any{amqp.Table{"count": int64(1)}}, "tenant": "t1", SeqHeader: int64(9)},
		Body:    []byte{0, 1, 2, 0xff},
	}
	now := ts.Add(time.Hour)
	cp := makeCopy(d, stamp{action: ActionReplay, operation: "op1", at: now, connUser: "guest"})
	m := cp.msg
	want := amqp.Publishing{
		ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 4,
		CorrelationId: "corr", ReplyTo: "replies", MessageId: "m1", Timestamp: ts,
		Type: "order.created", AppId: "shop", UserId: "guest",
	}
	m.Headers, m.Body = nil, nil
	if !reflect.DeepEqual(m, want) {
		t.Errorf("properties\n got %+v\nwant %+v", m, want)
	}
	if !bytes.Equal(cp.msg.Body, d.Body) {
		t.Errorf("body changed")
	}
	h := cp.msg.Headers
	if h["tenant"] != "t1" || h["x-death"] == nil {
		t.Errorf("original headers lost: %v", h)
	}
	if _, ok := h[SeqHeader]; ok {
		t.Errorf("a stale publish sequence header was copied")
	}
	if h[HeaderReplayCount] != int64(3) || h[HeaderOperation] != "op1" || h[HeaderReplayedAt] != now.Format(time.RFC3339Nano) {
		t.Errorf("warren headers %v", h)
	}
	if cp.userIDDropped != "" || cp.expirationDropped {
		t.Errorf("nothing should have been dropped: %+v", cp)
	}
}

func TestCopyDropsWhatTheBrokerWouldRefuseOrExpire(t *testing.T) {
	published := time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name           string
		props          domain.Properties
		now            time.Time
		wantUser       string
		wantUserDrop   string
		wantExpiration string
		wantExpDrop    bool
	}{
		{name: "a foreign user_id is dropped", props: domain.Properties{UserID: "alice"}, now: published, wantUserDrop: "alice"},
		{name: "the connection's user_id is kept", props: domain.Properties{UserID: "guest"}, now: published, wantUser: "guest"},
		{name: "a TTL with time left keeps the time left", props: domain.Properties{Expiration: "60000", Timestamp: published}, now: published.Add(15 * time.Second), wantExpiration: "45000"},
		{name: "a TTL past its deadline is dropped", props: domain.Properties{Expiration: "60000", Timestamp: published}, now: published.Add(time.Hour), wantExpDrop: true},
		{name: "a TTL without a timestamp is dropped", props: domain.Properties{Expiration: "60000"}, now: published, wantExpDrop: true},
		{name: "a malformed TTL is dropped", props: domain.Properties{Expiration: "soon", Timestamp: published}, now: published, wantExpDrop: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := makeCopy(domain.DeadLetter{Properties: tc.props}, stamp{action: ActionReplay, at: tc.now, connUser: "guest"})
			if cp.msg.UserId != tc.wantUser || cp.userIDDropped != tc.wantUserDrop {
				t.Errorf("user_id %q dropped %q, want %q dropped %q", cp.msg.UserId, cp.userIDDropped, tc.wantUser, tc.wantUserDrop)
			}
			if cp.msg.Expiration != tc.wantExpiration || cp.expirationDropped != tc.wantExpDrop {
				t.Errorf("expiration %q dropped %v, want %q dropped %v", cp.msg.Expiration, cp.expirationDropped, tc.wantExpiration, tc.wantExpDrop)
			}
		})
	}
}

func TestQuarantineAndReleaseHeaders(t *testing.T) {
	at := time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)
	q := makeCopy(domain.DeadLetter{ReplayCount: 1, Attempts: 3, Headers: amqp.Table{"k": "v"}},
		stamp{action: ActionQuarantine, operation: "op", at: at, reason: "bad schema", by: "ana"})
	h := q.msg.Headers
	if h[HeaderQuarantineReason] != "bad schema" || h[HeaderQuarantineBy] != "ana" || h[HeaderQuarantineAt] != at.Format(time.RFC3339Nano) || h[HeaderOperation] != "op" ||
		h[domain.HeaderQuarantineAttempts] != int64(3) {
		t.Fatalf("quarantine headers %v", h)
	}
	if _, ok := h[HeaderReplayCount]; ok {
		t.Fatalf("a quarantine is not a replay, yet the replay count was set")
	}
	released := makeCopy(domain.DeadLetter{ReplayCount: 1, Headers: h}, stamp{action: ActionReplay, operation: "op2", at: at})
	rh := released.msg.Headers
	for _, k := range []string{HeaderQuarantineReason, HeaderQuarantineBy, HeaderQuarantineAt, domain.HeaderQuarantineAttempts} {
		if _, ok := rh[k]; ok {
			t.Errorf("released copy still carries %s", k)
		}
	}
	if rh[HeaderReplayCount] != int64(2) || rh["k"] != "v" {
		t.Errorf("released headers %v", rh)
	}
}
