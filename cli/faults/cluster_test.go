//go:build faults

package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/cli"
)

// TestFaultClusterNodeStoppedLosesNothing stops a node of the three-node
// cluster mid-replay, with the DLQ, the work queue and the parking queue
// quorum queues replicated on all three: first the node that leads them,
// then a follower. warren talks to the first node throughout; the count
// is taken while the node is still down, and the node started after it.
func TestFaultClusterNodeStoppedLosesNothing(t *testing.T) {
	onBrokers(t, []string{"cluster"}, testClusterNodeStopped)
}

func testClusterNodeStopped(t *testing.T, b *broker) {
	r := newRunner(t, b, "cluster node stop_app (quorum, 3 replicas)", "node", setup{})
	leader := r.s.replicas(t, workQueue).Leader
	if leader == b.nodes[0].name {
		t.Fatalf("%s is led by %s, the node warren talks to: the scene places leaders on %s", workQueue, leader, b.nodes[1].name)
	}
	follower := b.nodes[2]
	if follower.name == leader {
		follower = b.nodes[1]
	}
	for _, victim := range []struct {
		node brokerNode
		role string
	}{{b.node(t, leader), "leader"}, {follower, "follower"}} {
		r.s.fill(t)
		r.s.waitOnline(t, 3)
		k := point(0.05, 0.3)
		// A rate the stop outlasts: rabbitmqctl in the root takes 1-2 s.
		ch := start(t, r.c, replayArgs("--rate", "1000")...)
		hit := injectAt(t, r.s, ch, workQueue, k, func() { b.stopNode(t, victim.node) })
		ch.wait(t, 2*time.Minute)
		if !hit {
			t.Errorf("warren finished before %s held %d messages; the stop missed", workQueue, k)
		}
		// The queue's online list comes with its statistics, up to an
		// interval late: wait for it rather than read it once.
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			q := r.s.replicas(t, workQueue)
			if slices.Contains(q.down(), victim.node.name) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s stopped, yet %s reports online %v", victim.node.name, workQueue, q.Online)
				break
			}
		}
		r.faultRun(t, ch, fmt.Sprintf("%s %s stopped at %s depth %d, --rate 1000", victim.role, victim.node.name, workQueue, k))
		b.startNode(t, victim.node)
	}
	r.s.waitOnline(t, 3)
	r.recover(t, 0)
}

// TestFaultClusterOwnNodeStoppedLosesNothing stops, mid-replay, the node
// warren's config names first (a follower of the scene's quorum queues),
// the others being its fallbacks: the replay loses its connections and
// stops, and `warren dlq resume`, run while the node is still down,
// reaches the cluster through a fallback node and finishes.
func TestFaultClusterOwnNodeStoppedLosesNothing(t *testing.T) {
	onBrokers(t, []string{"cluster"}, testClusterOwnNodeStopped)
}

func testClusterOwnNodeStopped(t *testing.T, b *broker) {
	const own = 2 // rabbitc3: the harness reads through rabbitc1, the leaders are on rabbitc2
	r := newRunner(t, b, "warren's own node stop_app (fallbacks)", "own", setup{firstNode: own})
	victim := b.nodes[own]
	if leader := r.s.replicas(t, workQueue).Leader; leader == victim.name {
		t.Fatalf("%s is led by %s, the node stopped: the scene places leaders on %s", workQueue, leader, b.nodes[1].name)
	}
	for range 2 {
		r.s.fill(t)
		r.s.waitOnline(t, 3)
		k := point(0.05, 0.3)
		ch := start(t, r.c, replayArgs("--rate", "1000")...)
		hit := injectAt(t, r.s, ch, workQueue, k, func() { b.stopNode(t, victim) })
		ch.wait(t, 2*time.Minute)
		if !hit {
			t.Errorf("warren finished before %s held %d messages; the stop missed", workQueue, k)
		}
		// faultRun resumes while the node is down: through a fallback.
		r.faultRun(t, ch, fmt.Sprintf("%s, warren's first node, stopped at %s depth %d, --rate 1000", victim.name, workQueue, k))
		b.startNode(t, victim)
	}
	r.s.waitOnline(t, 3)
	r.recover(t, 0)
}

// queueReplicas is what the management API says of a quorum queue's
// replicas.
type queueReplicas struct {
	Leader  string   `json:"leader"`
	Members []string `json:"members"`
	Online  []string `json:"online"`
}

func (q queueReplicas) down() []string {
	var out []string
	for _, m := range q.Members {
		if !slices.Contains(q.Online, m) {
			out = append(out, m)
		}
	}
	return out
}

func (s *scene) replicas(t *testing.T, queue string) queueReplicas {
	t.Helper()
	var q queueReplicas
	body := s.b.mgmt(t, http.MethodGet, "/api/queues/"+url.PathEscape(s.vhost)+"/"+url.PathEscape(queue), "")
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		t.Fatalf("%s: %v", queue, err)
	}
	return q
}

// waitOnline waits until each of the scene's queues has n members, all
// online.
func (s *scene) waitOnline(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, queue := range []string{dlqQueue, workQueue, parkingQueue} {
		for {
			q := s.replicas(t, queue)
			if len(q.Members) == n && len(q.down()) == 0 && q.Online != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: members %v, online %v; want %d, all online", queue, q.Members, q.Online, n)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// clusterStatus is what `warren status --json` says of the nodes and of
// the quorum queues' replicas.
type clusterStatus struct {
	Nodes []struct {
		Name    string `json:"name"`
		Running bool   `json:"running"`
	} `json:"nodes"`
	Queues []struct {
		Name        string   `json:"name"`
		Leader      *string  `json:"leader"`
		Members     []string `json:"members"`
		Online      []string `json:"online"`
		MembersDown []string `json:"members_down"`
	} `json:"queues"`
}

func status(t *testing.T, c *config) clusterStatus {
	t.Helper()
	ch := run(t, c, "status", "--json")
	if ch.code() != 0 {
		t.Fatalf("status --json: exit %d\n%s", ch.code(), ch.stderr.String())
	}
	var st clusterStatus
	if err := json.Unmarshal(ch.stdout.Bytes(), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, ch.stdout.String())
	}
	return st
}

// checkStatus asserts that status names down (or no node) as the only
// node not running, at once, and as work's only member down, allowing
// for the statistics interval (5 s) a returning member's online state
// lags by.
func checkStatus(t *testing.T, b *broker, c *config, down string) {
	t.Helper()
	st := status(t, c)
	if len(st.Nodes) != len(b.nodes) {
		t.Errorf("status lists %d nodes, want %d: %+v", len(st.Nodes), len(b.nodes), st.Nodes)
	}
	for _, n := range st.Nodes {
		if n.Running == (n.Name == down) {
			t.Errorf("status says %s running=%v with %q stopped", n.Name, n.Running, down)
		}
	}
	var wantDown []string
	if down != "" {
		wantDown = []string{down}
	}
	start := time.Now()
	for {
		var problem string
		found := false
		for _, q := range st.Queues {
			if q.Name != workQueue {
				continue
			}
			found = true
			switch {
			case q.Leader == nil || len(q.Members) != len(b.nodes) || q.Online == nil || !slices.Equal(q.MembersDown, wantDown):
				problem = fmt.Sprintf("%s: leader %v, members %v, online %v, members_down %v; want %d members and %v down",
					workQueue, deref(q.Leader), q.Members, q.Online, q.MembersDown, len(b.nodes), wantDown)
			case *q.Leader == down:
				problem = fmt.Sprintf("%s is still led by %s, which is stopped", workQueue, down)
			}
		}
		if !found {
			problem = "status does not list " + workQueue
		}
		if problem == "" {
			t.Logf("status shows %s's members down %v after %s", workQueue, wantDown, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Since(start) > 20*time.Second {
			t.Error(problem)
			return
		}
		time.Sleep(500 * time.Millisecond)
		st = status(t, c)
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// TestFaultClusterShowsANodeDownAndBackUp stops a node of the cluster and
// starts it again while the dashboard and status watch from another node:
// each shows the node down within one refresh, the quorum queues' member
// on it down, and then everything running again.
func TestFaultClusterShowsANodeDownAndBackUp(t *testing.T) {
	onBrokers(t, []string{"cluster"}, testClusterShowsANodeDown)
}

func testClusterShowsANodeDown(t *testing.T, b *broker) {
	s := newScene(t, b, "nodes")
	s.waitOnline(t, 3)
	c := writeConfig(t, s, setup{})
	victim := b.nodes[2]
	checkStatus(t, b, c, "")

	t.Setenv(passwordEnv, "guest")
	a := cli.NewApp()
	a.ConfigPath = c.path
	model, release, err := a.Factory().Dashboard(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	tm := teatest.NewTestModel(t, model, teatest.WithInitialTermSize(120, 40))
	t.Cleanup(func() { _ = tm.Quit() })
	// One refresh is 2 s (the default); the API answers within a second
	// more on this machine.
	const refresh = 2 * time.Second
	screen := func(what, want string, within time.Duration) {
		t.Helper()
		start := time.Now()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
			teatest.WithDuration(within), teatest.WithCheckInterval(50*time.Millisecond))
		t.Logf("dashboard shows %s after %s", what, time.Since(start).Round(10*time.Millisecond))
	}
	screen("the cluster", "nodes 3/3 running", time.Minute)

	b.stopNode(t, victim)
	screen("the node down", "nodes 2/3 running (down: "+victim.name+")", refresh+2*time.Second)
	checkStatus(t, b, c, victim.name)
	text := run(t, c, "status")
	if want := "nodes 2/3 running; down: " + victim.name; !strings.Contains(text.stdout.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, text.stdout.String())
	}

	b.startNode(t, victim)
	screen("the node back", "nodes 3/3 running", refresh+2*time.Second)
	s.waitOnline(t, 3)
	checkStatus(t, b, c, "")
}
