package dlqfile

import (
	"testing"
	"time"
)

func TestAnExportsIDIsItsHeadersAndOnlyItsHeaders(t *testing.T) {
	h := Header{Format: Format, Version: Version, Broker: "RabbitMQ 4.3.6", Vhost: "/", Queue: "orders.dlq",
		ExportedAt: time.Date(2026, 12, 5, 3, 0, 0, 123456789, time.UTC), Count: 3, Warren: "dev"}
	again := h
	if h.ID() != again.ID() || len(h.ID()) != 64 {
		t.Fatalf("the same header gives IDs %q and %q", h.ID(), again.ID())
	}
	later := h
	later.ExportedAt = later.ExportedAt.Add(time.Nanosecond)
	other := h
	other.Queue = "payments.dlq"
	if later.ID() == h.ID() || other.ID() == h.ID() {
		t.Errorf("another export has the same ID %s", h.ID())
	}
}
