//go:build integration

package ops

import (
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// A replay of the whole queue moves what is ready: messages another
// client holds (a browse on another screen) stay, and the plan says so
// before anyone answers its prompt.
func TestAReplayPlanSaysWhatAnotherClientHolds(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-held")
	rejectedScene(t, vhost, 6)
	browse := testkit.Channel(t, testConn(t, vhost))
	if err := browse.Cancel(testkit.Hold(t, browse, "orders.dlq", 6), false); err != nil {
		t.Fatal(err)
	}
	// It gives four back and keeps two, as a screen paging on would.
	for tag := uint64(1); tag <= 4; tag++ {
		if err := browse.Nack(tag, false, true); err != nil {
			t.Fatal(err)
		}
	}
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.WaitDepth(t, ch, "orders.dlq", 4)
	testkit.WaitUnacked(t, vhost, "orders.dlq", 2)
	l := newOps(t, ordersContext())
	p, err := l.Plan(testCtx(t), Scope{Action: Replay, Queue: domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Selected != 4 {
		t.Errorf("the plan read %d, want the 4 ready", p.Selected)
	}
	said := strings.Join(p.Warnings, "\n")
	for _, want := range []string{"2 messages are held unacknowledged by another client", "this replay leaves them in orders.dlq"} {
		if !strings.Contains(said, want) {
			t.Errorf("warnings %q, want %q", said, want)
		}
	}
}
