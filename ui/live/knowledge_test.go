package live

import (
	"testing"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/mgmt"
)

func TestKnowledge(t *testing.T) {
	c := &config.Context{Queues: []config.Queue{
		{Name: "orders", LogicalID: "header:event_id"},
		{Name: "payments", DLQ: "pay.dead", Quarantine: "pay.parking", LogicalID: "json:id"},
	}}
	orders := []mgmt.QueueRef{{Vhost: "/", Name: "orders"}}
	tests := []struct {
		name        string
		queue       string
		dlqOf       []mgmt.QueueRef
		wantOwner   string
		wantParking string
		wantRelease bool
	}{
		{name: "a configured dlq names its owner", queue: "pay.dead", wantOwner: "payments", wantParking: "pay.parking"},
		{name: "the broker's pairing finds the owner", queue: "orders.dlq", dlqOf: orders, wantOwner: "orders", wantParking: "orders.dlq.quarantine"},
		{name: "a configured parking queue releases", queue: "pay.parking", wantOwner: "payments", wantRelease: true},
		{name: "a quarantine suffix releases", queue: "orders.dlq.quarantine", wantRelease: true},
		{name: "an unknown DLQ has only the default parking queue", queue: "misc.dlq", wantParking: "misc.dlq.quarantine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := knowledge(c, mgmt.QueueRef{Vhost: "/", Name: tt.queue}, tt.dlqOf)
			owner := ""
			if k.queue != nil {
				owner = k.queue.Name
			}
			if owner != tt.wantOwner || k.release != tt.wantRelease || (!tt.wantRelease && k.parking != tt.wantParking) {
				t.Errorf("knowledge = owner %q parking %q release %v, want %q %q %v", owner, k.parking, k.release, tt.wantOwner, tt.wantParking, tt.wantRelease)
			}
		})
	}
}
