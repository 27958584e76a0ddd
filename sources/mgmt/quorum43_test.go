//go:build integration

package mgmt

import (
	"fmt"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// 4.3 reports how many of a quorum queue's messages wait out a delayed
// retry; 3.10, which brought at-least-once dead-lettering, already
// reports how many such dead letters a quorum queue still holds, once
// the queue's statistics are out. What a broker or a classic queue does
// not report reads as unknown (nil), never 0, and the cheap list carries
// neither on any version. (Before the statistics, a 3.10 quorum queue is
// listed without the figure: the wait below is for the figure itself.)
func TestQuorumDelayedAndDLXHeldAreReadWhereTheBrokerReportsThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("work", nil)
	e.queue("votes", amqp.Table{"x-queue-type": "quorum"})
	e.publish("votes", 2, nil)
	votesWithStats := "nil/0"
	if testkit.AtLeast(t, 4, 3) {
		votesWithStats = "0/0"
	}
	ready := map[string]int64{"work": 0, "votes": 2}
	known := func(p *int64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	for _, c := range []struct {
		name string
		o    domain.SnapshotOptions
		want map[string]string // queue → delayed/dlx held
	}{
		{"cheap list", domain.SnapshotOptions{}, map[string]string{"work": "nil/nil", "votes": "nil/nil"}},
		{"with statistics", domain.SnapshotOptions{AllRates: true}, map[string]string{"work": "nil/nil", "votes": votesWithStats}},
	} {
		var got map[string]string
		e.snapshot(c.o, func(s *domain.Snapshot) bool {
			got = map[string]string{}
			for name := range c.want {
				if q := s.Queue(domain.QueueRef{Vhost: e.vhost, Name: name}); q != nil && q.Ready == ready[name] {
					got[name] = known(q.Delayed) + "/" + known(q.DLXHeld)
				}
			}
			return fmt.Sprint(got) == fmt.Sprint(c.want)
		})
	}
}
