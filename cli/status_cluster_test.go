package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
)

// clusterSnapshot is a three-node cluster with n2 down: a quorum queue
// that lost its member there, one whose statistics still say it online
// (they lag the node list), one it says nothing about, one with no member
// on n2, and a classic queue.
func clusterSnapshot() *domain.Snapshot {
	s := unitSnapshot()
	s.Nodes = []domain.Node{{Name: "rabbit@n1", Running: true}, {Name: "rabbit@n2"}, {Name: "rabbit@n3", Running: true}}
	all := []string{"rabbit@n1", "rabbit@n2", "rabbit@n3"}
	s.Queues = []domain.Queue{
		{Vhost: "/", Name: "payments", Type: "quorum", Messages: 40, Ready: 40, HasRates: true,
			Node: "rabbit@n3", Members: all, Online: []string{"rabbit@n1", "rabbit@n3"}},
		{Vhost: "/", Name: "refunds", Type: "quorum", Messages: 4, Ready: 4, HasRates: true,
			Node: "rabbit@n1", Members: all, Online: all},
		{Vhost: "/", Name: "ledger", Type: "quorum", Messages: 2, Ready: 2, HasRates: true,
			Node: "rabbit@n1", Members: all},
		{Vhost: "/", Name: "invoices", Type: "quorum", Messages: 3, Ready: 3, HasRates: true,
			Node: "rabbit@n1", Members: []string{"rabbit@n1", "rabbit@n3"}, Online: []string{"rabbit@n1", "rabbit@n3"}},
		{Vhost: "/", Name: "orders", Type: "classic", Messages: 1, Ready: 1, HasRates: true, Node: "rabbit@n1"},
	}
	return s
}

func TestStatusShowsTheNodeDownAndEachQuorumQueuesMembers(t *testing.T) {
	r := runUnit(t, &fakeManagement{snap: clusterSnapshot()}, "--config", unitConfig(t, ""), "status")
	if r.err != nil {
		t.Fatalf("status: %v\n%s", r.err, r.errOut)
	}
	lines := strings.Split(r.out, "\n")
	if lines[1] != "nodes 2/3 running; down: rabbit@n2" {
		t.Errorf("second line %q, want the nodes running and the one down", lines[1])
	}
	replica := func(name string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 2 && f[1] == name && strings.HasPrefix(f[2], "rabbit@") {
				return f[2:]
			}
		}
		t.Fatalf("no replica row for %s in\n%s", name, r.out)
		return nil
	}
	for name, want := range map[string]string{
		"payments": "rabbit@n3 rabbit@n1, rabbit@n2, rabbit@n3 rabbit@n2",
		"refunds":  "rabbit@n1 rabbit@n1, rabbit@n2, rabbit@n3 rabbit@n2",
		"invoices": "rabbit@n1 rabbit@n1, rabbit@n3 none",
		"ledger":   "rabbit@n1 rabbit@n1, rabbit@n2, rabbit@n3 " + format.Unknown,
	} {
		if got := strings.Join(replica(name), " "); got != want {
			t.Errorf("%s: leader, members, down = %q, want %q", name, got, want)
		}
	}
	if !strings.Contains(r.out, "LEADER") || strings.Count(r.out, "orders") != 1 {
		t.Errorf("the replica table lists quorum queues only:\n%s", r.out)
	}

	// One node, no replicas: no replica table, and nodes 1/1.
	r = runUnit(t, &fakeManagement{snap: unitSnapshot()}, "--config", unitConfig(t, ""), "status")
	if strings.Contains(r.out, "LEADER") || !strings.Contains(r.out, "\nnodes 1/1 running\n") {
		t.Errorf("a single node with unreplicated queues:\n%s", r.out)
	}
}

func TestStatusJSONGivesNodesAndQuorumReplicas(t *testing.T) {
	r := runUnit(t, &fakeManagement{snap: clusterSnapshot()}, "--config", unitConfig(t, ""), "status", "--json")
	if r.err != nil {
		t.Fatalf("status --json: %v\n%s", r.err, r.errOut)
	}
	var got statusJSON
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("decode %s: %v", r.out, err)
	}
	want := []statusNode{{"rabbit@n1", true}, {"rabbit@n2", false}, {"rabbit@n3", true}}
	if !slices.Equal(got.Nodes, want) {
		t.Errorf("nodes %+v, want %+v", got.Nodes, want)
	}
	by := map[string]statusQueue{}
	for _, q := range got.Queues {
		by[q.Name] = q
	}
	p := by["payments"]
	if p.Leader == nil || *p.Leader != "rabbit@n3" || len(p.Members) != 3 ||
		!slices.Equal(p.Online, []string{"rabbit@n1", "rabbit@n3"}) || !slices.Equal(p.MembersDown, []string{"rabbit@n2"}) {
		t.Errorf("payments: leader %v members %v online %v down %v", p.Leader, p.Members, p.Online, p.MembersDown)
	}
	if d := by["refunds"].MembersDown; !slices.Equal(d, []string{"rabbit@n2"}) {
		t.Errorf("refunds: online by its lagging statistics, on a node down, members_down %v, want [rabbit@n2]", d)
	}
	if d := by["invoices"].MembersDown; d == nil || len(d) != 0 {
		t.Errorf("invoices: no member on the node down, members_down %v, want []", d)
	}
	if l := by["ledger"]; l.Online != nil || l.MembersDown != nil {
		t.Errorf("ledger: the broker said nothing of online members, got online %v down %v, want null", l.Online, l.MembersDown)
	}
	if o := by["orders"]; o.Leader != nil || o.Members != nil {
		t.Errorf("a classic queue has no leader or members, got %v %v", o.Leader, o.Members)
	}
	for _, frag := range []string{`"members_down": []`, `"members_down": null`, `"leader": null`} {
		if !strings.Contains(r.out, frag) {
			t.Errorf("the JSON lacks %s:\n%s", frag, r.out)
		}
	}
}
