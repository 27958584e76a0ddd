//go:build integration

package ops

import (
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

func TestScanCountsTheWholeDLQAndGivesItBack(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 3)
	l := newOps(t, ordersContext())
	var reported []int
	st, err := l.Scan(testCtx(t), domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}, false, func(n int) { reported = append(reported, n) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 3 || st.Reasons["rejected"] != 3 || st.Origins["orders"] != 3 || !st.Complete {
		t.Fatalf("stats = %+v, want 3 rejections from orders", st)
	}
	if len(reported) == 0 || reported[len(reported)-1] != 3 {
		t.Errorf("progress = %v, want it to end at 3", reported)
	}
	testkit.WaitDepth(t, testkit.Channel(t, testConn(t, vhost)), "orders.dlq", 3)
}

func TestScanRefusesAQuorumDLQWhoseLimitCountsReturns(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	testkit.Declare(t, testkit.Channel(t, testConn(t, vhost)), "limited.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 5})
	l := newOps(t, ordersContext())
	_, err := l.Scan(testCtx(t), domain.QueueRef{Vhost: vhost, Name: "limited.dlq"}, false, nil)
	// The override the operator gave the browse covers the scan.
	if _, err := l.Scan(testCtx(t), domain.QueueRef{Vhost: vhost, Name: "limited.dlq"}, true, nil); err != nil {
		t.Fatalf("scan with the risk allowed = %v, want the counts", err)
	}
	if testkit.AtLeast(t, 4, 3) {
		// The scan returns with basic.nack, which 4.3 does not count.
		if err != nil {
			t.Fatalf("scan on RabbitMQ %s = %v, want the counts: returns are free there", testkit.Version(t), err)
		}
		return
	}
	var refused *domain.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "delivery limit 5") {
		t.Fatalf("scan = %v, want a refusal naming the limit", err)
	}
}
