package mgmt

import (
	"context"
	"testing"
	"time"
)

func TestFirstPageIsTheDeepestQueuesWithTheTotal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	depths := map[string]int{"shallow": 1, "deep": 5, "middle": 3}
	for name, n := range depths {
		e.queue(name, nil)
		e.publish(name, n, nil)
	}
	var s *Snapshot
	waitFor(t, 20*time.Second, func() (bool, string) {
		var err error
		if s, err = e.c.FirstPage(context.Background(), e.vhost, 2); err != nil {
			t.Fatal(err)
		}
		return len(s.Queues) == 2 && s.Queues[0].Messages == 5, describe(s)
	})
	if !s.Partial || s.QueueTotal != 3 || s.Queues[0].Name != "deep" || s.Queues[1].Name != "middle" || s.Queues[1].Messages != 3 {
		t.Fatalf("partial %v of %d: %s", s.Partial, s.QueueTotal, describe(s))
	}
	if s.Overview.RabbitMQVersion == "" || len(s.Nodes) == 0 || s.Queues[0].HasRates || s.StatsAge < DefaultStatsInterval {
		t.Fatalf("overview %+v nodes %+v first %+v age %v", s.Overview, s.Nodes, s.Queues[0], s.StatsAge)
	}
}
