package dlq

import (
	"errors"
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
)

func TestReturnCostsACountBeforeRabbitMQ43(t *testing.T) {
	tests := []struct {
		version string
		want    bool
	}{
		{"3.10.8", true},
		{"3.13.7", true},
		{"4.0.5", true},
		{"4.2.3", true},
		{"4.3.0", false},
		{"4.3.1", false},
		{"4.10.0", false},
		{"5.0.0", false},
		{"4.3.0-rc.1", true},
		{"4.3.1-alpha", false},
		{"4.3.0+build.7", false},
		{"v4.3.0", false},
		{"", true},
		{"garbage", true},
		{"4", true},
		{"4.x.0", true},
		{"-1.3.0", true},
	}
	for _, tt := range tests {
		if got := returnCostsCount(tt.version); got != tt.want {
			t.Errorf("returnCostsCount(%q) = %v, want %v", tt.version, got, tt.want)
		}
	}
}

func TestOpenGuardRefusesLimitedQuorumQueuesWhereReturnsCost(t *testing.T) {
	tests := []struct {
		name    string
		q       domain.QueueInfo
		allow   bool
		refused bool
	}{
		{"classic", domain.QueueInfo{Type: domain.TypeClassic, DeliveryLimit: -1, BrokerVersion: "3.10.8"}, false, false},
		{"stream", domain.QueueInfo{Type: domain.TypeStream, DeliveryLimit: -1, BrokerVersion: "4.0.0"}, false, false},
		{"quorum without limit on 3.10", domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: -1, BrokerVersion: "3.10.8"}, false, false},
		{"quorum with limit on 3.10", domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: 5, BrokerVersion: "3.10.8"}, false, true},
		{"quorum with 4.0 default limit", domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: 20, BrokerVersion: "4.0.9"}, false, true},
		{"quorum with limit, version unknown", domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: 20}, false, true},
		{"quorum with limit, operator override", domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: 5, BrokerVersion: "3.10.8"}, true, false},
		{"quorum with limit on 4.3", domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: 20, BrokerVersion: "4.3.0"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.Name, tt.q.Vhost = "dlq", "/"
			err := checkOpen(tt.q, Options{AllowLimitRisk: tt.allow})
			var re *domain.RefusedError
			if got := errors.As(err, &re); got != tt.refused {
				t.Fatalf("refused = %v (%v), want %v", got, err, tt.refused)
			}
			if tt.refused && !strings.Contains(err.Error(), "delivery limit") {
				t.Errorf("refusal does not say why: %v", err)
			}
		})
	}
}

func TestHeldQuorumMessagesWithoutHeadroomAreRefused(t *testing.T) {
	old := domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: 3, BrokerVersion: "3.12.0"}
	current := domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: 3, BrokerVersion: "4.3.0"}
	tests := []struct {
		name     string
		q        domain.QueueInfo
		headroom int64
		want     bool
		mention  string
	}{
		{"headroom left", old, 1, false, ""},
		{"none left, returns cost", old, 0, true, "returning it again will"},
		{"none left, returns free", current, 0, true, "channel is lost"},
		{"classic never", domain.QueueInfo{Type: domain.TypeClassic, DeliveryLimit: -1}, -1, false, ""},
		{"unlimited quorum never", domain.QueueInfo{Type: domain.TypeQuorum, DeliveryLimit: -1}, -1, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, got := refusal(tt.q, domain.DeadLetter{Headroom: tt.headroom, DeliveryCount: 3 - tt.headroom})
			if got != tt.want || !strings.Contains(reason, tt.mention) {
				t.Errorf("refusal = %q, %v; want %v mentioning %q", reason, got, tt.want, tt.mention)
			}
		})
	}
}
