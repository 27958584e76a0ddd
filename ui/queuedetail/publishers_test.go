package queuedetail

import (
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
)

func TestPublishersAreListedWhereTheBrokerLinksThem(t *testing.T) {
	rate := 12.5
	tests := []struct {
		name    string
		d       domain.QueueDetail
		want    []string
		notWant string
	}{
		{name: "rates mode basic", d: domain.QueueDetail{PublishersNote: domain.NoPublisherLinks},
			want: []string{"Publishers (0)", "the broker's rates mode does not link publishers to exchanges; see the channels screen"}, notWant: "EXCHANGE"},
		{name: "detailed, nobody publishing", d: domain.QueueDetail{},
			want: []string{"Publishers (0)", "no channel publishes to this queue's exchanges"}},
		{name: "detailed", d: domain.QueueDetail{Publishers: []domain.Publisher{
			{Exchange: "", Channel: "10.0.0.7:40100 -> 10.0.0.1:5672 (1)", Connection: "order-gateway\x1b[2J", User: "svc-gateway", PublishRate: &rate},
			{Exchange: "orders-x", Channel: "10.0.0.8:40200 -> 10.0.0.1:5672 (3)", Connection: "importer", User: "svc-import"},
		}}, want: []string{"Publishers (2)", "(default)", `order-gateway\x1b[2J`, "12", "orders-x", "importer", "—"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newScreen(&describer{})
			got := m.publishers(&tt.d)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			if tt.notWant != "" && strings.Contains(got, tt.notWant) {
				t.Errorf("has %q:\n%s", tt.notWant, got)
			}
			if strings.Contains(got, "\x1b[2J") {
				t.Error("a hostile connection name reached the terminal")
			}
		})
	}
}
