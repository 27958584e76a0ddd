package domain

import (
	"testing"
	"time"
)

func TestDrainETA(t *testing.T) {
	tests := []struct {
		name         string
		backlog      int64
		lambda, mu   float64
		wantETA      time.Duration
		wantDraining bool
	}{
		{"seed example: 12000 at 100 out and 80 in drains in 600 s", 12000, 80, 100, 600 * time.Second, true},
		{"no inflow drains at the consume rate", 500, 0, 50, 10 * time.Second, true},
		{"inflow equal to outflow is not draining", 12000, 100, 100, 0, false},
		{"inflow above outflow is growing, not draining", 12000, 150, 100, 0, false},
		{"nothing consumed is not draining", 10, 0, 0, 0, false},
		{"empty backlog is drained now", 0, 150, 100, 0, true},
		{"fractional seconds are kept", 3, 0, 2, 1500 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eta, draining := DrainETA(tt.backlog, tt.lambda, tt.mu)
			if eta != tt.wantETA || draining != tt.wantDraining {
				t.Fatalf("DrainETA(%d, %v, %v) = %v, %v; want %v, %v", tt.backlog, tt.lambda, tt.mu, eta, draining, tt.wantETA, tt.wantDraining)
			}
		})
	}
}

func TestQueueDrainSaysWhetherItDrainsOrGrows(t *testing.T) {
	tests := []struct {
		name string
		q    Queue
		want Drain
	}{
		{"draining", Queue{Messages: 12000, PublishRate: 80, AckRate: 100, Consumers: 3, HasRates: true}, Drain{Movement: Draining, ETA: 10 * time.Minute}},
		{"growing", Queue{Messages: 10, PublishRate: 150, AckRate: 100, Consumers: 1, HasRates: true}, Drain{Movement: Growing, Growth: 50}},
		{"growing without consumers", Queue{Messages: 10, PublishRate: 2, HasRates: true}, Drain{Movement: Growing, Growth: 2}},
		{"waiting without consumers", Queue{Messages: 10, HasRates: true}, Drain{Movement: NoConsumers}},
		{"a DLQ holds", Queue{Messages: 10, HasRates: true, DLQOf: []QueueRef{{Vhost: "/", Name: "orders"}}}, Drain{Movement: Held}},
		{"a parking queue holds", Queue{Messages: 14, HasRates: true, Parking: true}, Drain{Movement: Held}},
		{"a retry queue waits", Queue{Messages: 1, HasRates: true, RetryTarget: &QueueRef{Vhost: "/", Name: "orders"}}, Drain{Movement: RetryWait}},
		{"a DLQ that grows grows", Queue{Messages: 10, PublishRate: 3, HasRates: true, DLQOf: []QueueRef{{Vhost: "/", Name: "orders"}}}, Drain{Movement: Growing, Growth: 3}},
		{"stalled: consumers attached, nothing acked", Queue{Messages: 10, Consumers: 2, HasRates: true}, Drain{Movement: Stalled}},
		{"steady: in = out", Queue{Messages: 10, PublishRate: 5, AckRate: 5, Consumers: 1, HasRates: true}, Drain{Movement: Steady}},
		{"no rates", Queue{Messages: 10, Consumers: 1}, Drain{Movement: NoRates}},
		{"empty, with or without rates", Queue{Messages: 0}, Drain{Movement: Empty}},
		// RabbitMQ 4.3: messages counts the delayed and the DLX-held ones.
		{"only delayed messages: not empty", Queue{Messages: 3, Delayed: n(3), Consumers: 1, HasRates: true}, Drain{Movement: Delayed}},
		{"only delayed, no consumers: delayed", Queue{Messages: 3, Delayed: n(3), HasRates: true}, Drain{Movement: Delayed}},
		{"delayed messages count in the drain ETA", Queue{Messages: 100, Ready: 40, Delayed: n(60), Consumers: 1, AckRate: 10, HasRates: true}, Drain{Movement: Draining, ETA: 10 * time.Second}},
		{"some ready beside delayed ones: stalled", Queue{Messages: 5, Ready: 2, Delayed: n(3), Consumers: 1, HasRates: true}, Drain{Movement: Stalled}},
		{"only DLX-held dead letters: a DLX backlog", Queue{Messages: 3, DLXHeld: n(3), Consumers: 1, AckRate: 5, HasRates: true}, Drain{Movement: DLXBacklog}},
		{"DLX-held dead letters are not in the drain ETA", Queue{Messages: 103, Ready: 100, DLXHeld: n(3), Consumers: 1, AckRate: 10, HasRates: true}, Drain{Movement: Draining, ETA: 10 * time.Second}},
		{"a stale DLX figure above the depth leaves no backlog", Queue{Messages: 2, DLXHeld: n(5), HasRates: true}, Drain{Movement: DLXBacklog}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.q.Drain(); got != tt.want {
				t.Fatalf("Drain() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// drain_eta_seconds follows the DRAIN judgement: an empty queue is
// drained now, a queue holding only dead letters for its DLX is not, nor
// is one that grows.
func TestDrainETAFollowsTheDrainJudgement(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name  string
		q     Queue
		ok    bool
		wantS float64
	}{
		{"empty", Queue{HasRates: true}, true, 0},
		{"only dead letters for its DLX", Queue{Messages: 3, DLXHeld: n(3), HasRates: true, Consumers: 1, AckRate: 5}, false, 0},
		{"draining", Queue{Messages: 100, Ready: 100, HasRates: true, Consumers: 1, AckRate: 10}, true, 10},
		{"growing", Queue{Messages: 100, Ready: 100, HasRates: true, Consumers: 1, PublishRate: 20, AckRate: 10}, false, 0},
		{"no rates", Queue{Messages: 100, Ready: 100}, false, 0},
	} {
		eta, ok := c.q.DrainETA()
		if ok != c.ok || ok && eta.Seconds() != c.wantS {
			t.Errorf("%s: DrainETA = %v, %v; want %vs, %v", c.name, eta, ok, c.wantS, c.ok)
		}
	}
}

func TestDeliveryLimitFromArgumentPolicyOrVersionDefault(t *testing.T) {
	tests := []struct {
		name    string
		q       Queue
		version string
		want    int64
	}{
		{"argument", Queue{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": 5.0}}, "3.10.8", 5},
		{"policy", Queue{Type: "quorum", EffectiveDefinition: map[string]any{"delivery-limit": 7.0}}, "3.13.1", 7},
		{"smaller of argument and policy", Queue{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": 9.0},
			EffectiveDefinition: map[string]any{"delivery-limit": 3.0}}, "3.12.0", 3},
		{"none before 4.0", Queue{Type: "quorum"}, "3.13.7", -1},
		{"default 20 from 4.0", Queue{Type: "quorum"}, "4.0.5", 20},
		{"negative means unlimited on 4.x", Queue{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": -1.0}}, "4.1.0", -1},
		{"classic queues have none", Queue{Type: "classic", Arguments: map[string]any{"x-delivery-limit": 5.0}}, "4.1.0", -1},
		{"on 4.x an argument of -1 does not lift a policy's limit", Queue{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": -1.0},
			EffectiveDefinition: map[string]any{"delivery-limit": 5.0}}, "4.3.6", 5},
		{"on 4.x a policy of -1 does not lift an argument's limit", Queue{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": 4.0},
			EffectiveDefinition: map[string]any{"delivery-limit": -1.0}}, "4.0.5", 4},
		{"on 4.x both negative is none", Queue{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": -1.0},
			EffectiveDefinition: map[string]any{"delivery-limit": -1.0}}, "4.1.0", -1},
		{"before 4.0 the smaller, a negative one included", Queue{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": -1.0},
			EffectiveDefinition: map[string]any{"delivery-limit": 5.0}}, "3.13.7", -1},
		{"a version that cannot be read keeps the 4.x default", Queue{Type: "quorum"}, "", 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.q.DeliveryLimit(tt.version); got != tt.want {
				t.Fatalf("DeliveryLimit(%s) = %d, want %d", tt.version, got, tt.want)
			}
		})
	}
}

func TestSettingPrefersArgumentOverPolicy(t *testing.T) {
	q := Queue{Arguments: map[string]any{"x-dead-letter-exchange": "from-arg"},
		EffectiveDefinition: map[string]any{"dead-letter-exchange": "from-policy", "dead-letter-routing-key": "rk"}}
	q.ResolveDeadLettering()
	if !q.HasDLX || q.DeadLetterExchange != "from-arg" || q.DeadLetterRoutingKey != "rk" {
		t.Fatalf("resolved %+v", q)
	}
	empty := Queue{Arguments: map[string]any{"x-dead-letter-exchange": ""}}
	empty.ResolveDeadLettering()
	if !empty.HasDLX || empty.DeadLetterExchange != "" {
		t.Fatalf("an empty DLX names the default exchange and still counts: %+v", empty)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in               string
		major, minor     int
		atLeast313, at40 bool
	}{
		{"3.10.8", 3, 10, false, false},
		{"3.13.7", 3, 13, true, false},
		{"4.0.0-rc.1", 4, 0, true, true},
		{"4.3", 4, 3, true, true},
		{"garbage", 0, 0, false, false},
	}
	for _, tt := range tests {
		v := ParseVersion(tt.in)
		if v.Major != tt.major || v.Minor != tt.minor || v.AtLeast(3, 13) != tt.atLeast313 || v.AtLeast(4, 0) != tt.at40 {
			t.Errorf("ParseVersion(%q) = %+v", tt.in, v)
		}
	}
}

func TestDelayedRetryFromTheBrokerArgumentsOrPolicy(t *testing.T) {
	for _, tt := range []struct {
		name string
		q    Queue
		want DelayedRetry
		set  bool
	}{
		{"the broker's words", Queue{DelayedRetry: "all (min: 2000ms, max: 10000ms)",
			Arguments: map[string]any{"x-delayed-retry-type": "all", "x-delayed-retry-min": float64(2000), "x-delayed-retry-max": float64(10000)}},
			DelayedRetry{Broker: "all (min: 2000ms, max: 10000ms)", Type: "all", Min: 2000, Max: 10000}, true},
		{"disabled by the broker", Queue{DelayedRetry: "disabled"}, DelayedRetry{Broker: "disabled", Min: -1, Max: -1}, false},
		{"policy keys without statistics", Queue{EffectiveDefinition: map[string]any{"delayed-retry-type": "failed", "delayed-retry-min": float64(1000)}},
			DelayedRetry{Type: "failed", Min: 1000, Max: -1}, true},
		{"the argument wins over the policy", Queue{Arguments: map[string]any{"x-delayed-retry-type": "returned"},
			EffectiveDefinition: map[string]any{"delayed-retry-type": "all"}}, DelayedRetry{Type: "returned", Min: -1, Max: -1}, true},
		{"nothing said", Queue{}, DelayedRetry{Min: -1, Max: -1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.q.DelayedRetrySetting()
			if got != tt.want || got.Set() != tt.set {
				t.Fatalf("got %+v (set %v), want %+v (set %v)", got, got.Set(), tt.want, tt.set)
			}
		})
	}
}

func n(v int64) *int64 { return &v }

func TestWhichBrokersCountOnAPublishedXDeath(t *testing.T) {
	for v, want := range map[string]bool{"3.10.7": true, "3.12.14": true, "3.13.0": false, "3.13.2": false, "3.13.3": true, "3.13.7": true, "4.0.0": false, "4.3.6": false, "4.0.0-rc.1": false, "": false, "garbage": false} {
		if got := CarriesPublishedDeaths(v); got != want {
			t.Errorf("CarriesPublishedDeaths(%q) = %v, want %v", v, got, want)
		}
	}
}
