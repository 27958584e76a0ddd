package live

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/sources/brokertest"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/common"
	uidlq "github.com/warrenops/warren/ui/dlq"
	"github.com/warrenops/warren/ui/styles"
)

func TestScanCountsTheWholeDLQAndGivesItBack(t *testing.T) {
	vhost := brokertest.Vhost(t, "warren-live")
	rejectedScene(t, vhost, 3)
	l := newLive(t, ordersContext())
	var reported []int
	st, err := l.Scan(testCtx(t), mgmt.QueueRef{Vhost: vhost, Name: "orders.dlq"}, func(n int) { reported = append(reported, n) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 3 || st.Reasons["rejected"] != 3 || st.Origins["orders"] != 3 || !st.Complete {
		t.Fatalf("stats = %+v, want 3 rejections from orders", st)
	}
	if len(reported) == 0 || reported[len(reported)-1] != 3 {
		t.Errorf("progress = %v, want it to end at 3", reported)
	}
	brokertest.WaitDepth(t, brokertest.Channel(t, testConn(t, vhost)), "orders.dlq", 3)
}

func TestScanRefusesAQuorumDLQWhoseLimitCountsReturns(t *testing.T) {
	vhost := brokertest.Vhost(t, "warren-live")
	brokertest.Declare(t, brokertest.Channel(t, testConn(t, vhost)), "limited.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 5})
	l := newLive(t, ordersContext())
	_, err := l.Scan(testCtx(t), mgmt.QueueRef{Vhost: vhost, Name: "limited.dlq"}, nil)
	var refused *uidlq.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "delivery limit 5") {
		t.Fatalf("scan = %v, want a refusal naming the limit", err)
	}
}

func TestTheDLQScreenShowsWholeQueueStatisticsOnARealBroker(t *testing.T) {
	vhost := brokertest.Vhost(t, "warren-live")
	rejectedScene(t, vhost, 3)
	l := newLive(t, ordersContext())
	scr := l.Screens(styles.New(true)).NewDLQ(mgmt.QueueRef{Vhost: vhost, Name: "orders.dlq"})
	p := &pump{t: t, s: scr, msgs: make(chan tea.Msg, 64)}
	p.s.SetSize(120, 40)
	t.Cleanup(func() {
		if cmd := p.s.(common.Closer).Close(); cmd != nil {
			cmd()
		}
	})
	p.run(p.s.Init())
	p.until("three held letters", func(v string) bool { return strings.Contains(v, "3 held") })
	p.keys("S")
	p.until("the whole queue's figures", func(v string) bool {
		return strings.Contains(v, "3 messages, 3 held") && strings.Contains(v, "reasons (whole queue)")
	})
}
