package mgmt

import (
	"testing"

	"github.com/warrenops/warren/domain"
)

func TestOriginDeliveryLimitsCountOnlyQueuesWithALimit(t *testing.T) {
	dlq := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	origins := []domain.QueueRef{{Vhost: "/", Name: "limited"}, {Vhost: "/", Name: "classic"}, {Vhost: "/", Name: "unlimited"}}
	snap := &domain.Snapshot{Overview: domain.Overview{RabbitMQVersion: "3.13.7"}, Queues: []domain.Queue{
		{Vhost: "/", Name: "orders.dlq", DLQOf: origins},
		{Vhost: "/", Name: "limited", Type: "quorum", Arguments: map[string]any{"x-delivery-limit": float64(5)}},
		{Vhost: "/", Name: "classic", Type: "classic", Arguments: map[string]any{"x-delivery-limit": float64(5)}},
		{Vhost: "/", Name: "unlimited", Type: "quorum"},
	}}
	got := snap.OriginDeliveryLimits(dlq)
	if len(got) != 1 || got["limited"] != 5 {
		t.Fatalf("limits = %v, want only limited: 5", got)
	}
	snap.Overview.RabbitMQVersion = "4.1.0"
	if got := snap.OriginDeliveryLimits(dlq); got["unlimited"] != 20 {
		t.Fatalf("limits on 4.1 = %v, want the default of 20 for unlimited", got)
	}
}
