package format

import (
	"strings"
	"testing"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
)

// actions may not import ui, so the plan's question words its counts and
// sizes itself; this keeps them the words every view uses.
func TestThePlansQuestionWordsFiguresAsTheViewsDo(t *testing.T) {
	for _, size := range []int{3, 1536, 3 << 20} {
		l := domain.DeadLetter{MessageID: "a", LogicalID: "a", LogicalIDFrom: domain.IDMessageID, OriginQueue: "orders", Body: make([]byte, size)}
		p, err := actions.NewPlan(actions.Request{Action: actions.ActionReplay, Queue: "orders.dlq", InboxKnown: true, Letters: []domain.DeadLetter{l}})
		if err != nil {
			t.Fatal(err)
		}
		want := Messages(1) + " (" + Bytes(int64(size)) + ")"
		if got := p.Summary(); !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
		if got := p.Lines()[0]; !strings.HasPrefix(got, Messages(1)+" → ") || !strings.HasSuffix(got, "("+Bytes(int64(size))+")") {
			t.Errorf("dry-run line %q does not word 1 message of %s as the views do", got, Bytes(int64(size)))
		}
	}
}
