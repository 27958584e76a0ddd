package mgmt

import (
	"slices"
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
)

// A quorum queue's leader, members and the members the broker reports
// online come through the decoder; the members down follow from them,
// and are unknown (nil) where the broker does not say.
func TestQuorumMembersDownFromOnline(t *testing.T) {
	in := `[{"name":"q1","type":"quorum","node":"n1","leader":"n2","members":["n1","n2","n3"],"online":["n2","n1"]},
	        {"name":"q2","type":"quorum","leader":"n1","members":["n1","n2","n3"],"online":[]},
	        {"name":"q3","type":"quorum","leader":"n1","members":["n1","n2","n3"]},
	        {"name":"c","node":"n3"}]`
	queues, err := decodeQueues(strings.NewReader(in), false)
	if err != nil {
		t.Fatal(err)
	}
	q1, q2, q3, c := queues[0], queues[1], queues[2], queues[3]
	if q1.Node != "n2" || !slices.Equal(q1.Members, []string{"n1", "n2", "n3"}) {
		t.Errorf("q1 leader %q members %v, want n2 of n1, n2, n3", q1.Node, q1.Members)
	}
	if down := q1.MembersDown(); !slices.Equal(down, []string{"n3"}) {
		t.Errorf("q1 members down %v, want [n3]", down)
	}
	if down := q2.MembersDown(); !slices.Equal(down, []string{"n1", "n2", "n3"}) {
		t.Errorf("q2 reports none online: members down %v, want all three", down)
	}
	if down := q1.MembersDown("n1"); !slices.Equal(down, []string{"n1", "n3"}) {
		t.Errorf("q1 with node n1 down: members down %v, want [n1 n3]", down)
	}
	if down := q3.MembersDown(); down != nil {
		t.Errorf("q3 has no online field: members down %v, want unknown (nil)", down)
	}
	if c.Online != nil || c.MembersDown() != nil || c.Node != "n3" {
		t.Errorf("a classic queue: node %q, online %v", c.Node, c.Online)
	}
}

func TestNodesRunningNamesTheNodesDown(t *testing.T) {
	running, down := domain.NodesRunning([]domain.Node{{Name: "a", Running: true}, {Name: "b"}, {Name: "c", Running: true}, {Name: "d"}})
	if running != 2 || !slices.Equal(down, []string{"b", "d"}) {
		t.Errorf("running %d, down %v; want 2 and [b d]", running, down)
	}
	if running, down := domain.NodesRunning(nil); running != 0 || down != nil {
		t.Errorf("no nodes: running %d, down %v", running, down)
	}
}
