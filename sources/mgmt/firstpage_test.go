//go:build integration

package mgmt

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

func TestFirstPageIsTheDeepestQueuesWithTheTotal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queuesHolding(map[string]int{"shallow": 1, "deep": 5, "middle": 3})
	var s *domain.Snapshot
	waitFor(t, 20*time.Second, func() (bool, string) {
		var err error
		if s, err = e.c.FirstPage(context.Background(), e.vhost, 2); err != nil {
			t.Fatal(err)
		}
		// The totals are the vhosts' statistics, up to an interval old;
		// the broker is shared, so they hold at least these nine.
		return len(s.Queues) == 2 && s.Queues[0].Messages == 5 && s.Overview.Totals.Messages >= 9 && s.Overview.Totals.Ready >= 9,
			fmt.Sprintf("%s totals %+v", describe(s), s.Overview.Totals)
	})
	if !s.Partial || s.QueueTotal != 3 || s.Queues[0].Name != "deep" || s.Queues[1].Name != "middle" || s.Queues[1].Messages != 3 {
		t.Fatalf("partial %v of %d: %s", s.Partial, s.QueueTotal, describe(s))
	}
	if s.Overview.RabbitMQVersion == "" || s.Overview.QueueCount < 3 || !s.Overview.RatesUnknown ||
		len(s.Nodes) == 0 || s.Queues[0].HasRates || s.StatsAge < domain.DefaultStatsInterval {
		t.Fatalf("overview %+v nodes %+v first %+v age %v", s.Overview, s.Nodes, s.Queues[0], s.StatsAge)
	}
}

func TestEveryVhostIsListedWithItsDepths(t *testing.T) {
	t.Parallel()
	a, b := newEnv(t), newEnv(t)
	a.queue("a-work", nil)
	a.publish("a-work", 4, nil)
	b.queue("b-work", nil)
	b.publish("b-work", 2, nil)
	b.queue("b-idle", nil)
	want := map[domain.QueueRef]int64{
		{Vhost: a.vhost, Name: "a-work"}: 4,
		{Vhost: b.vhost, Name: "b-work"}: 2,
		{Vhost: b.vhost, Name: "b-idle"}: 0,
	}
	c := testClient(t)
	check := func(what string, qs []domain.Queue, want map[domain.QueueRef]int64) (bool, string) {
		got := map[domain.QueueRef]int64{}
		for _, q := range qs {
			if _, ok := want[q.Ref()]; ok {
				got[q.Ref()] = q.Messages
			}
		}
		return maps.Equal(got, want), fmt.Sprintf("%s: %v", what, got)
	}
	waitFor(t, 20*time.Second, func() (bool, string) {
		s, err := c.Snapshot(context.Background(), domain.SnapshotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return check("snapshot of every vhost", s.Queues, want)
	})
	// The page holds the deepest 500 of the broker (the API's largest
	// page): the two queues holding messages are among them, unless the
	// shared broker holds 500 deeper ones.
	delete(want, domain.QueueRef{Vhost: b.vhost, Name: "b-idle"})
	waitFor(t, 20*time.Second, func() (bool, string) {
		s, err := c.FirstPage(context.Background(), "", 500)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(s.Vhosts, a.vhost) || !slices.Contains(s.Vhosts, b.vhost) {
			t.Fatalf("first page of every vhost names vhosts %q, without %q or %q", s.Vhosts, a.vhost, b.vhost)
		}
		if !s.Partial || s.QueueTotal < len(s.Queues) || !slices.IsSortedFunc(s.Queues, func(x, y domain.Queue) int { return int(y.Messages - x.Messages) }) {
			t.Fatalf("first page of every vhost: partial %v, %d of %d, not deepest first: %s", s.Partial, len(s.Queues), s.QueueTotal, describe(s))
		}
		return check("first page of every vhost", s.Queues, want)
	})
}
