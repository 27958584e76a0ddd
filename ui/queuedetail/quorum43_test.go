package queuedetail

import (
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"
)

func n(v int64) *int64 { return &v }

func TestTheDepthSplitsDelayedFromReadyWhereTheBrokerSaysAndNowhereElse(t *testing.T) {
	for _, tt := range []struct {
		name      string
		q         domain.Queue
		want      []string
		wantNot   []string
		retryRows bool
	}{
		{"4.3 with a delayed retry", domain.Queue{Type: "quorum", Messages: 5, Ready: 2, Delayed: n(3), ReadyReturned: n(2), HasRates: true,
			DelayedRetry: "all (min: 2000ms, max: 10000ms)", Arguments: map[string]any{"x-delayed-retry-type": "all"}},
			[]string{"depth 5 (ready 2, delayed 3, unacked 0)", "delayed retry all (min: 2000ms, max: 10000ms) · 3 waiting out their delay · 2 ready after a return"},
			nil, true},
		{"4.3 without one", domain.Queue{Type: "quorum", Messages: 5, Ready: 5, Delayed: n(0), HasRates: true, DelayedRetry: "disabled"},
			[]string{"depth 5 (ready 5, delayed 0, unacked 0)"}, []string{"delayed retry"}, false},
		{"a policy asks for one, figure not read", domain.Queue{Type: "quorum", Messages: 5, Ready: 5, HasRates: true,
			EffectiveDefinition: map[string]any{"delayed-retry-type": "failed", "delayed-retry-min": float64(1000)}},
			[]string{"depth 5 (ready 5, delayed —, unacked 0)", "delayed retry failed (min: 1s)"}, nil, true},
		{"before 4.3", domain.Queue{Type: "quorum", Messages: 5, Ready: 5, HasRates: true},
			[]string{"depth 5 (ready 5, unacked 0)"}, []string{"delayed", "DLX backlog"}, false},
		{"a queue seconds old", domain.Queue{Type: "quorum", Messages: 5, Ready: 5, StatsPending: true},
			[]string{"consumers —", "consumers and rates unknown: the broker has not emitted this queue's statistics yet"},
			[]string{"0 consumers"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.Vhost, tt.q.Name = "/", "orders"
			m, _ := loaded(t, &describer{detail: detail(tt.q)})
			view := m.View()
			for _, w := range tt.want {
				if !strings.Contains(view, w) {
					t.Errorf("view lacks %q:\n%s", w, view)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(view, w) {
					t.Errorf("view has %q:\n%s", w, view)
				}
			}
			if got := strings.Contains(view, "delayed-retry-type"); got != tt.retryRows {
				t.Errorf("delayed-retry settings shown = %v, want %v", got, tt.retryRows)
			}
		})
	}
}

func TestTheDLXBacklogTakesTheTroubleToneWhileItGrows(t *testing.T) {
	q := domain.Queue{Vhost: "/", Name: "orders", Type: "quorum", Messages: 3, DLXHeld: n(3), DLXHeldBytes: n(9), HasRates: true}
	d := &describer{detail: detail(q)}
	m, _ := loaded(t, d)
	line := "DLX backlog: 3 dead letters held for the DLX (9 B); see the findings below"
	if !strings.Contains(m.View(), line) || strings.Contains(m.View(), "growing") {
		t.Fatalf("a backlog seen once:\n%s", m.View())
	}
	q.DLXHeld, q.Messages = n(5), 5
	next := detail(q)
	next.TakenAt = now.Add(2 * time.Second)
	m, _ = step(t, m, detailMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}, Detail: next})
	if !strings.Contains(m.View(), "DLX backlog: 5 dead letters held for the DLX (9 B) · DLX backlog growing (+2 in the last 1m)") {
		t.Fatalf("a growing backlog:\n%s", m.View())
	}
}
