package overview

import (
	"strings"
	"testing"
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
	if got := again.Settings(); got != left {
		t.Errorf("settings %+v, want %+v", got, left)
	}
}
