package dlq

import (
	"math"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// deathEntry builds an x-death entry as the broker sends it.
func deathEntry(queue, reason string, count int64, at time.Time, keys ...string) amqp.Table {
	rk := make([]any, len(keys))
	for i, k := range keys {
		rk[i] = k
	}
	return amqp.Table{"queue": queue, "reason": reason, "count": count, "time": at, "exchange": "ex", "routing-keys": rk}
}

func TestParseDeathsReadsEveryBrokerShape(t *testing.T) {
	tests := []struct {
		name string
		h    amqp.Table
		want []domain.Death
	}{
		{"no header", nil, nil},
		{"3.10 reject after retries, most recent first", amqp.Table{
			"x-death": []any{
				deathEntry("orders", "rejected", 3, t0, "a3"),
				deathEntry("orders.retry2", "expired", 1, t0.Add(time.Minute), "a2"),
			},
			"x-first-death-queue": "orders", "x-first-death-reason": "rejected", "x-first-death-exchange": "ex",
		}, []domain.Death{
			{Queue: "orders", Reason: "rejected", Exchange: "ex", RoutingKeys: []string{"a3"}, Count: 3, Time: t0},
			{Queue: "orders.retry2", Reason: "expired", Exchange: "ex", RoutingKeys: []string{"a2"}, Count: 1, Time: t0.Add(time.Minute)},
		}},
		{"per-message TTL keeps original-expiration", amqp.Table{
			"x-death": []any{amqp.Table{"queue": "q", "reason": "expired", "count": int64(1), "original-expiration": "5000"}},
		}, []domain.Death{{Queue: "q", Reason: "expired", Count: 1, OriginalExpiration: "5000"}}},
		{"count as other integer types", amqp.Table{
			"x-death": []any{amqp.Table{"queue": "a", "count": int32(2)}, amqp.Table{"queue": "b", "count": uint8(4)}, amqp.Table{"queue": "c", "count": float64(5)}},
		}, []domain.Death{{Queue: "a", Count: 2}, {Queue: "b", Count: 4}, {Queue: "c", Count: 5}}},
		{"missing, negative or absurd count reads as one", amqp.Table{
			"x-death": []any{amqp.Table{"queue": "a"}, amqp.Table{"queue": "b", "count": int64(-7)}, amqp.Table{"queue": "c", "count": "lots"}, amqp.Table{"queue": "d", "count": math.NaN()}},
		}, []domain.Death{{Queue: "a", Count: 1}, {Queue: "b", Count: 1}, {Queue: "c", Count: 1}, {Queue: "d", Count: 1}}},
		{"bytes instead of strings", amqp.Table{
			"x-death": []any{amqp.Table{"queue": []byte("q"), "reason": []byte("maxlen"), "routing-keys": []any{[]byte("k"), int32(1)}}},
		}, []domain.Death{{Queue: "q", Reason: "maxlen", Count: 1, RoutingKeys: []string{"k"}}}},
		{"entries that are not tables are skipped", amqp.Table{
			"x-death": []any{"junk", nil, int64(3), []any{}, amqp.Table{"queue": "q"}},
		}, []domain.Death{{Queue: "q", Count: 1}}},
		{"x-death not an array", amqp.Table{"x-death": amqp.Table{"queue": "q"}}, nil},
		{"x-death a string", amqp.Table{"x-death": "rejected"}, nil},
		{"program-built slice of tables", amqp.Table{"x-death": []amqp.Table{{"queue": "q", "count": 2}}}, []domain.Death{{Queue: "q", Count: 2}}},
		{"time as epoch seconds", amqp.Table{"x-death": []any{amqp.Table{"queue": "q", "time": t0.Unix()}}}, []domain.Death{{Queue: "q", Count: 1, Time: time.Unix(t0.Unix(), 0)}}},
		{"routing-keys a string is ignored", amqp.Table{"x-death": []any{amqp.Table{"queue": "q", "routing-keys": "k"}}}, []domain.Death{{Queue: "q", Count: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseDeaths(tt.h)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseDeaths:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestFindOriginPrefersTheMostRecentDeath(t *testing.T) {
	retry := []any{deathEntry("orders", "rejected", 3, t0, "a3"), deathEntry("orders.retry", "expired", 2, t0)}
	tests := []struct {
		name string
		h    amqp.Table
		want origin
	}{
		{"3.10: head of x-death, not x-first-death", amqp.Table{
			"x-death":             []any{deathEntry("orders", "rejected", 1, t0, "k"), deathEntry("wait", "expired", 1, t0)},
			"x-first-death-queue": "wait", "x-first-death-reason": "expired",
		}, origin{Queue: "orders", Reason: "rejected", Exchange: "ex", RoutingKeys: []string{"k"}}},
		{"3.13+: x-last-death wins and takes its entry's keys", amqp.Table{
			"x-death": retry, "x-last-death-queue": "orders", "x-last-death-reason": "rejected", "x-last-death-exchange": "ex",
			"x-first-death-queue": "orders.retry",
		}, origin{Queue: "orders", Reason: "rejected", Exchange: "ex", RoutingKeys: []string{"a3"}}},
		{"forged x-last-death disagreeing with x-death loses", amqp.Table{
			"x-death": retry, "x-last-death-queue": "payments", "x-last-death-reason": "rejected",
		}, origin{Queue: "orders", Reason: "rejected", Exchange: "ex", RoutingKeys: []string{"a3"}}},
		{"unreadable x-death falls back to x-last-death", amqp.Table{
			"x-death": "garbage", "x-last-death-queue": "q", "x-last-death-reason": "expired", "x-last-death-exchange": "e",
			"x-first-death-queue": "first",
		}, origin{Queue: "q", Reason: "expired", Exchange: "e"}},
		{"unreadable x-death falls back to x-first-death", amqp.Table{
			"x-death": "garbage", "x-first-death-queue": "q", "x-first-death-reason": "maxlen", "x-first-death-exchange": "e",
		}, origin{Queue: "q", Reason: "maxlen", Exchange: "e"}},
		{"nothing at all", amqp.Table{}, origin{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findOrigin(ParseDeaths(tt.h), tt.h)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAttemptsTakesTheLargestCounterPlusReplays(t *testing.T) {
	deaths := []domain.Death{{Queue: "orders", Reason: "rejected", Count: 3}, {Queue: "orders.retry", Reason: "expired", Count: 2}, {Queue: "orders", Reason: "expired", Count: 1}}
	tests := []struct {
		name   string
		deaths []domain.Death
		origin string
		h      amqp.Table
		header string
		want   int
	}{
		{"x-death counts for the origin only", deaths, "orders", nil, "", 4},
		{"x-delivery-count larger", deaths, "orders", amqp.Table{"x-delivery-count": int64(9)}, "", 9},
		{"application header larger", deaths, "orders", amqp.Table{"x-retry-count": int32(6)}, "x-retry-count", 6},
		{"application header as text", nil, "q", amqp.Table{"x-retry-count": "7"}, "x-retry-count", 7},
		{"application header not configured is ignored", nil, "q", amqp.Table{"x-retry-count": int32(6)}, "", 0},
		{"replays are added", deaths, "orders", amqp.Table{"x-warren-replay-count": int64(2)}, "", 6},
		{"negative replay count ignored", deaths, "orders", amqp.Table{"x-warren-replay-count": int64(-5)}, "", 4},
		{"saturates instead of overflowing", []domain.Death{{Queue: "q", Count: math.MaxInt64}, {Queue: "q", Count: math.MaxInt64}}, "q", amqp.Table{"x-warren-replay-count": int64(math.MaxInt64)}, "", math.MaxInt32},
		{"no information", nil, "", nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Attempts(tt.deaths, tt.origin, tt.h, tt.header); got != tt.want {
				t.Errorf("Attempts = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestDecodeCountsDeliveriesBehindADeliveryLimitDeath(t *testing.T) {
	h := amqp.Table{"x-death": []any{deathEntry("work", "delivery_limit", 1, t0)}}
	d := amqp.Delivery{Headers: h, MessageId: "m"}
	if got := Decode(d, Options{}, false).Attempts; got != 1 {
		t.Errorf("without the origin's limit: attempts %d, want 1 (the x-death count)", got)
	}
	if got := Decode(d, Options{OriginDeliveryLimits: map[string]int64{"work": 2}}, false).Attempts; got != 3 {
		t.Errorf("with limit 2: attempts %d, want 3 deliveries", got)
	}
}

func TestDecodeFillsTheDeadLetter(t *testing.T) {
	d := amqp.Delivery{
		DeliveryTag: 7, Redelivered: true, MessageId: "m-1", ContentType: "application/json",
		Timestamp: t0, Body: []byte(`{"event":{"id":"E-9"}}`),
		Headers: amqp.Table{
			"x-death":                    []any{deathEntry("orders", "rejected", 3, t0, "order.created"), deathEntry("orders.retry", "expired", 2, t0.Add(time.Hour))},
			"x-delivery-count":           int64(1),
			"x-warren-replay-count":      int32(1),
			"x-warren-quarantine-reason": "poison",
			"x-stream-offset":            int64(42),
		},
	}
	got := Decode(d, Options{LogicalID: "json:event.id"}, false)
	failure := domain.Failure{Convention: domain.ConventionBroker, Kind: "rejected", OriginQueue: "orders", OriginExchange: "ex",
		OriginRoutingKey: "order.created", FailedAt: t0.Add(time.Hour)}
	want := domain.DeadLetter{
		Failure: failure, Group: domain.GroupOf(failure),
		DeliveryTag: 7, Offset: 42, Redelivered: true, MessageID: "m-1", LogicalID: "E-9", LogicalIDFrom: domain.IDJSON,
		Reason: "rejected", OriginQueue: "orders", OriginExchange: "ex", RoutingKeys: []string{"order.created"},
		Attempts: 4, ReplayCount: 1, DeadLetteredAt: t0.Add(time.Hour), Deaths: ParseDeaths(d.Headers),
		Size: len(d.Body), Quarantined: true, DeliveryCount: 1, AcquiredCount: -1, Headroom: -1,
		Properties: domain.Properties{ContentType: "application/json", MessageID: "m-1", Timestamp: t0},
		Headers:    d.Headers,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode:\n got %+v\nwant %+v", got, want)
	}
	if withBody := Decode(d, Options{}, true); string(withBody.Body) != string(d.Body) {
		t.Errorf("keepBody did not keep the body")
	}
}

// A copy warren replayed carries the attempts it had (x-warren-attempts)
// and, per queue, the x-death counts it carried (x-warren-deaths): when it
// dies again, a broker that counts on the carried x-death (before 4.0)
// adds only the origin's counts beyond those, one that starts afresh adds
// all of the origin's.
func TestAReplayedCopyCountsItsEarlierFailuresOnce(t *testing.T) {
	record := func(attempts int64, deaths amqp.Table, replays int64) amqp.Table {
		return amqp.Table{"x-warren-attempts": attempts, "x-warren-deaths": deaths, "x-warren-replay-count": replays}
	}
	orders3 := amqp.Table{"orders": int64(3)}
	withApp := func(h amqp.Table, n int64) amqp.Table {
		h["x-retry-count"] = n
		return h
	}
	tests := []struct {
		name    string
		carries bool
		limits  map[string]int64
		deaths  []domain.Death
		h       amqp.Table
		want    int
	}{
		{"3.10: the carried count went on by one", true, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 4}}, record(3, orders3, 1), 4},
		{"3.10: a new reason is a new entry", true, nil,
			[]domain.Death{{Queue: "orders", Reason: "expired", Count: 1}, {Queue: "orders", Reason: "rejected", Count: 3}}, record(3, orders3, 1), 4},
		{"3.10: replayed elsewhere, dead there", true, nil,
			[]domain.Death{{Queue: "billing", Reason: "rejected", Count: 1}, {Queue: "orders", Reason: "rejected", Count: 3}}, record(3, orders3, 1), 4},
		{"3.10: through its retry queue again, the expiries are no attempts", true, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 6}, {Queue: "orders.retry", Reason: "expired", Count: 4}},
			record(3, amqp.Table{"orders": int64(3), "orders.retry": int64(2)}, 1), 6},
		{"3.10: past a quorum origin's limit of 5", true, map[string]int64{"orders": 5},
			[]domain.Death{{Queue: "orders", Reason: "delivery_limit", Count: 1}, {Queue: "orders", Reason: "rejected", Count: 2}}, record(2, amqp.Table{"orders": int64(2)}, 1), 8},
		{"4.3: x-death started afresh", false, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 1}}, record(3, orders3, 1), 4},
		{"4.3: through its retry queue again", false, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 3}, {Queue: "orders.retry", Reason: "expired", Count: 2}}, record(3, orders3, 1), 6},
		{"4.3: past a quorum origin's limit of 5", false, map[string]int64{"orders": 5},
			[]domain.Death{{Queue: "orders", Reason: "delivery_limit", Count: 1}}, record(3, orders3, 1), 9},
		{"no record, 3.10: x-death counted every death", true, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 2}}, amqp.Table{"x-warren-replay-count": int64(1)}, 2},
		{"no record, 4.3: a death per replay", false, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 1}}, amqp.Table{"x-warren-replay-count": int64(1)}, 2},
		{"a negative record is no record", false, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 1}}, record(-9, nil, 1), 2},
		{"3.10: deaths carried that are not a table count as none", true, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 4}}, record(3, nil, 1), 7},
		{"4.3: the application's counter the copy kept is not added to the record", false, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 1}}, withApp(record(3, orders3, 1), 3), 4},
		{"3.10: the application's counter above the record wins", true, nil,
			[]domain.Death{{Queue: "orders", Reason: "rejected", Count: 4}}, withApp(record(3, orders3, 1), 8), 8},
		{"a limit too large to add one to saturates", false, map[string]int64{"orders": math.MaxInt64},
			[]domain.Death{{Queue: "orders", Reason: "delivery_limit", Count: 1}}, amqp.Table{}, math.MaxInt32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{CarriesDeaths: tt.carries, OriginDeliveryLimits: tt.limits, AttemptsHeader: "x-retry-count"}
			if got := o.attempts(tt.deaths, "orders", tt.h, true); got != tt.want {
				t.Errorf("attempts = %d, want %d", got, tt.want)
			}
			if got := o.attempts(tt.deaths, "orders", tt.h, false); got > tt.want {
				t.Errorf("marks not believed: attempts = %d, above the believed %d", got, tt.want)
			}
		})
	}
}

// A broker before 4.0 keeps the first time per queue and reason in the
// x-death a replayed copy carried: a copy that died again is as old as
// its replay at the most, not its first death. A replay time a publisher
// wrote (an operation the audit log does not know) changes nothing.
func TestAReplayedCopyThatDiedAgainIsNoOlderThanItsReplay(t *testing.T) {
	replayed := t0.Add(time.Hour)
	h := amqp.Table{
		"x-death":              []any{deathEntry("orders", "rejected", 2, t0)},
		"x-warren-operation":   "op-1",
		"x-warren-replayed-at": replayed.Format(time.RFC3339Nano),
	}
	for _, tt := range []struct {
		name  string
		known bool
		want  time.Time
	}{
		{"replayed by a known operation", true, replayed},
		{"a replay time a publisher wrote", false, t0},
	} {
		o := Options{KnownOperation: func(string) bool { return tt.known }}
		if got := Decode(amqp.Delivery{Headers: h}, o, false).DeadLetteredAt; !got.Equal(tt.want) {
			t.Errorf("%s: dead-lettered at %v, want %v", tt.name, got, tt.want)
		}
	}
	h["x-warren-replayed-at"] = t0.Add(-time.Hour).Format(time.RFC3339Nano)
	if got := Decode(amqp.Delivery{Headers: h}, Options{}, false).DeadLetteredAt; !got.Equal(t0) {
		t.Errorf("a replay before the death: dead-lettered at %v, want the death's %v", got, t0)
	}
}

// A publisher that writes warren's attempt record alone, without a replay
// count, names no operation the audit log knows: its record counts for
// nothing.
func TestAForgedAttemptRecordRaisesNoCount(t *testing.T) {
	h := amqp.Table{
		"x-death":           []any{deathEntry("orders", "rejected", 2, t0)},
		"x-warren-attempts": int64(1000),
	}
	o := Options{KnownOperation: func(string) bool { return false }}
	if got := Decode(amqp.Delivery{Headers: h}, o, false).Attempts; got != 2 {
		t.Errorf("a forged x-warren-attempts: attempts %d, want the x-death count, 2", got)
	}
}

// A quarantined copy keeps the attempt count its letter had: in the
// parking queue the origin's delivery limit is not known, and the
// x-death count alone (1 for a delivery_limit death) would say less. A
// forged count is not believed.
func TestAParkedCopyKeepsItsAttemptCount(t *testing.T) {
	h := amqp.Table{
		"x-death":                       []any{deathEntry("work", "delivery_limit", 1, t0)},
		domain.HeaderQuarantineReason:   "poison",
		domain.HeaderOperation:          "op-1",
		domain.HeaderQuarantineAttempts: int64(3),
	}
	known := func(op string) bool { return op == "op-1" }
	if got := Decode(amqp.Delivery{Headers: h}, Options{KnownOperation: known}, false).Attempts; got != 3 {
		t.Errorf("a parked copy of a letter of 3 attempts: %d", got)
	}
	forged := Options{KnownOperation: func(string) bool { return false }}
	if got := Decode(amqp.Delivery{Headers: h}, forged, false).Attempts; got != 1 {
		t.Errorf("a forged quarantine count: attempts %d, want the x-death count, 1", got)
	}
}
