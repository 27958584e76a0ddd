package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

// An overview built again for the same context (back from the fleet
// view) starts as the operator left the last one: its vhost, sort and
// filter, and reads that vhost first.
func TestAnOverviewStartsAsTheLastOneWasLeft(t *testing.T) {
	l := &lister{replies: []reply{{snap: snapshot(queue("shop", "orders", 5), queue("shop", "orders.dlq", 2), queue("/", "audit", 1))}}}
	m := newModel(l)
	m, _ = load(t, m, m.Init())
	for _, k := range []string{"s", "/", "o", "r", "d", "enter"} {
		m, _ = update(t, m, press(k))
	}
	left := m.Settings()
	if left.Sort != ByAge || left.Filter != "ord" {
		t.Fatalf("settings after s and /ord: %+v", left)
	}
	left.Vhost = "shop"

	l2 := &lister{replies: []reply{{snap: snapshot(queue("shop", "orders", 5), queue("shop", "orders.dlq", 2))}}}
	again := newModel(l2)
	again.Restore(left)
	again, _ = load(t, again, again.Init())
	v := again.View()
	for _, want := range []string{"vhost: shop", "sort: age", "filter: ord"} {
		if !strings.Contains(v, want) {
			t.Errorf("the overview built again lacks %q:\n%s", want, v)
		}
	}
	if len(l2.asked) == 0 || l2.asked[0].Vhost != "shop" {
		t.Errorf("the overview built again read %+v, want vhost shop first", l2.asked)
	}
	if got := again.Settings(); got.Vhost != left.Vhost || got.Sort != left.Sort || got.Filter != left.Filter {
		t.Errorf("settings %+v, want %+v", got, left)
	}
}

// Back from the fleet view within the trouble window, the overview goes
// on with what it watched: a growing DLQ is marked on the first read and
// its depth history goes on. Back after longer, or with what was watched
// forgotten, they start again, since nothing watched in between.
func TestAnOverviewBackWithinTheWindowKeepsItsMarksAndTrends(t *testing.T) {
	const window = time.Minute
	dlq := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	leave := func() (Settings, *clockedScene) {
		scene := &clockedScene{every: DefaultRefresh, queue: troubleScene(time.Hour)}
		m := New(Options{Lister: scene, Refresh: time.Nanosecond, Window: window})
		m.SetSize(120, 30)
		m, _ = load(t, m, m.Init())
		for scene.at < 40*time.Second {
			m, _ = load(t, m, m.fetch())
		}
		if !marked(m)["orders.dlq"] {
			t.Fatalf("orders.dlq not marked after 40 s of dead letters")
		}
		return m.Settings(), scene
	}
	back := func(left Settings, scene *clockedScene, away time.Duration) *Model {
		scene.at += away - scene.every // the next snapshot is taken on return
		m := New(Options{Lister: scene, Refresh: time.Nanosecond, Window: window})
		m.clock = func() time.Time { return taken.Add(scene.at + scene.every) }
		m.SetSize(120, 30)
		m.Restore(left)
		m, _ = load(t, m, m.Init())
		return m
	}
	tests := []struct {
		name   string
		away   time.Duration
		forget bool
		kept   bool
	}{
		{name: "back after 20 s", away: 20 * time.Second, kept: true},
		{name: "back after two minutes", away: 2 * time.Minute},
		{name: "another context visited since", away: 20 * time.Second, forget: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left, scene := leave()
			if tt.forget {
				left = left.Forget()
			}
			m := back(left, scene, tt.away)
			if got := marked(m)["orders.dlq"]; got != tt.kept {
				t.Errorf("orders.dlq marked on the first read back: %v, want %v", got, tt.kept)
			}
			depths := m.trends[dlq].depth.Len()
			if tt.kept && depths < 10 || !tt.kept && depths != 1 {
				t.Errorf("orders.dlq's depth history holds %d samples on the first read back", depths)
			}
			if left.Vhost != "" || left.Sort != m.Settings().Sort {
				t.Errorf("arrangement not restored: %+v", m.Settings())
			}
		})
	}
}
