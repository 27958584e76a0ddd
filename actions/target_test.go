package actions

import "testing"

// A walk without a preview names its target in the audit log when every
// copy goes to one place known before a message is read.
func TestAWalkNamesItsTargetWhenItIsFixed(t *testing.T) {
	for _, c := range []struct {
		name string
		req  Request
		want string
	}{
		{"a quarantine", Request{Action: ActionQuarantine, Parking: "orders.dlq.quarantine"}, "queue:orders.dlq.quarantine"},
		{"--to a queue", Request{Action: ActionReplay, To: &Override{RoutingKey: "work"}}, "queue:work"},
		{"--to an exchange and key", Request{Action: ActionReplay, To: &Override{Exchange: "orders", RoutingKey: "order.placed"}}, "exchange:orders/order.placed"},
		{"--to an exchange, each message's key", Request{Action: ActionReplay, To: &Override{Exchange: "orders", KeepKey: true}}, ""},
		{"back to each origin", Request{Action: ActionReplay}, ""},
	} {
		if got := fixedTarget(c.req); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
