package queuedetail

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/components/effect"
	"github.com/warrenops/warren/ui/styles"
)

// effects is a fake inbox: the queues named in inboxes have one.
type effects struct {
	inboxes map[string]domain.Effect
	err     error
	asked   []string
}

func (f *effects) HasInbox(ref domain.QueueRef) bool {
	_, ok := f.inboxes[ref.Name]
	return ok
}

func (f *effects) Effect(_ context.Context, ref domain.QueueRef, window time.Duration) (domain.Effect, error) {
	f.asked = append(f.asked, ref.Name)
	e := f.inboxes[ref.Name]
	e.Window = window
	return e, f.err
}

// effectOf runs the inbox read among cmd's commands and applies it.
func effectOf(t *testing.T, m *Model, cmd tea.Cmd) *Model {
	t.Helper()
	if cmd == nil {
		return m
	}
	switch msg := cmd().(type) {
	case effect.Msg:
		m, _ = step(t, m, msg)
	case tea.BatchMsg:
		for _, c := range msg {
			m = effectOf(t, m, c)
		}
	}
	return m
}

func TestInboxEffectLine(t *testing.T) {
	orders := domain.Queue{Vhost: "/", Name: "orders", Type: "classic"}
	dlq := domain.Queue{Vhost: "/", Name: "orders.dlq", Type: "classic", DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}}
	recent := domain.Effect{Count: 252, Rate: 4.2, Now: now, Last: now.Add(-3 * time.Second)}
	tests := []struct {
		name      string
		q         domain.Queue
		fx        *effects
		want      string
		wantAsked string
	}{
		{name: "a queue with an inbox shows its pace", q: orders, fx: &effects{inboxes: map[string]domain.Effect{"orders": recent}},
			want: "inbox: 4.2 effects/s over the last 1m, last 3s ago", wantAsked: "orders"},
		{name: "a DLQ shows the inbox of the queue it belongs to", q: dlq, fx: &effects{inboxes: map[string]domain.Effect{"orders": recent}},
			want: "inbox of orders: 4.2 effects/s", wantAsked: "orders"},
		{name: "a DLQ the config gives its source's inbox names the source as its owner", q: dlq,
			fx:   &effects{inboxes: map[string]domain.Effect{"orders": recent, "orders.dlq": recent}},
			want: "inbox of orders: 4.2 effects/s", wantAsked: "orders"},
		{name: "a DLQ in a vhost names its source without the vhost the header gives", q: domain.Queue{Vhost: "shop", Name: "orders.dlq", Type: "classic",
			DLQOf: []domain.QueueRef{{Vhost: "shop", Name: "orders"}}}, fx: &effects{inboxes: map[string]domain.Effect{"orders": recent}},
			want: "inbox of orders: 4.2 effects/s", wantAsked: "orders"},
		{name: "an empty inbox says so", q: orders, fx: &effects{inboxes: map[string]domain.Effect{"orders": {Now: now}}},
			want: "0 effects/s over the last 1m, none ever recorded", wantAsked: "orders"},
		{name: "a database that does not answer is unknown with the reason", q: orders,
			fx:   &effects{inboxes: map[string]domain.Effect{"orders": {}}, err: errors.New("cannot reach PostgreSQL at 127.0.0.1:5432")},
			want: "inbox effects: unknown (cannot reach PostgreSQL at 127.0.0.1:5432)", wantAsked: "orders"},
		{name: "a queue without an inbox has no line", q: orders, fx: &effects{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{Queue: tt.q.Ref(), Describer: &describer{detail: detail(tt.q)}, Styles: styles.New(true),
				Refresh: time.Nanosecond, Now: func() time.Time { return now }, Effects: tt.fx})
			m.SetSize(120, 60)
			m, cmd := step(t, m, m.Init()())
			if tt.wantAsked != "" && !strings.Contains(m.View(), "reading…") {
				t.Errorf("before the answer the line does not say it is reading:\n%s", m.View())
			}
			m = effectOf(t, m, cmd)
			if got := strings.Join(tt.fx.asked, ","); got != tt.wantAsked {
				t.Fatalf("asked the inbox of %q, want %q", got, tt.wantAsked)
			}
			view := m.View()
			if tt.want == "" {
				if strings.Contains(view, "inbox effects") {
					t.Fatalf("a line without an inbox:\n%s", view)
				}
				return
			}
			if !strings.Contains(view, tt.want) {
				t.Fatalf("view lacks %q:\n%s", tt.want, view)
			}
		})
	}
}

func TestOneInboxReadAtATime(t *testing.T) {
	fx := &effects{inboxes: map[string]domain.Effect{"orders": {Now: now}}}
	q := domain.Queue{Vhost: "/", Name: "orders"}
	m := New(Options{Queue: q.Ref(), Describer: &describer{detail: detail(q)}, Styles: styles.New(true),
		Refresh: time.Nanosecond, Now: func() time.Time { return now }, Effects: fx})
	m, _ = step(t, m, m.Init()())
	m, cmd := step(t, m, m.fetch()())
	m = effectOf(t, m, cmd)
	if len(fx.asked) != 0 {
		t.Fatalf("a second read started while the first was running: %v", fx.asked)
	}
	other := effect.New(&effects{inboxes: fx.inboxes, err: errors.New("other screen")})
	m, _ = step(t, m, other.Fetch([]domain.QueueRef{q.Ref()})())
	if m.fetchEffect() != nil || strings.Contains(m.View(), "other screen") {
		t.Fatal("another screen's answer was applied")
	}
}
