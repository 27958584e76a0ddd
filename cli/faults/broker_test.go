//go:build faults

package faults

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// broker is one RabbitMQ the suite runs against, as make services and
// make services-cluster bring them up. warren and the harness talk to
// the node at amqpPort and mgmtPort; on the cluster that is rabbitc1.
type broker struct {
	// name is the broker's column in the table: 3.10, 4.3 or cluster.
	name               string
	amqpPort, mgmtPort int
	// quorum makes the scene's queues quorum queues, replicated on
	// every node of the cluster.
	quorum bool
	// nodes are the nodes rabbitmqctl can stop, each with the command
	// that reaches it; the first is the one warren talks to.
	nodes []brokerNode
}

type brokerNode struct {
	name               string
	amqpPort, mgmtPort int
	argv               []string
}

// brokersEnv picks the brokers of a run, e.g. WARREN_FAULTS_BROKERS=cluster;
// by default every one. A fault that does not depend on the broker
// (PostgreSQL, the audit file) runs on the first of them only.
const brokersEnv = "WARREN_FAULTS_BROKERS"

var allBrokers = []string{"3.10", "4.3", "cluster"}

// servicesScript is .ci/services.sh, which runs rabbitmqctl for the 4.3
// nodes inside their root.
func servicesScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".ci", "services.sh")
}

func brokerNamed(name string) *broker {
	script := servicesScript()
	switch name {
	case "3.10":
		return &broker{name: name, amqpPort: 5672, mgmtPort: 15672,
			nodes: []brokerNode{{name: "the system's node", amqpPort: 5672, mgmtPort: 15672, argv: []string{"rabbitmqctl"}}}}
	case "4.3":
		return &broker{name: name, amqpPort: 5673, mgmtPort: 15673,
			nodes: []brokerNode{{name: "rabbit43@localhost", amqpPort: 5673, mgmtPort: 15673, argv: []string{"bash", script, "ctl", "43"}}}}
	case "cluster":
		b := &broker{name: name, amqpPort: 5681, mgmtPort: 15681, quorum: true}
		for i := 1; i <= 3; i++ {
			b.nodes = append(b.nodes, brokerNode{name: fmt.Sprintf("rabbitc%d@localhost", i),
				amqpPort: 5680 + i, mgmtPort: 15680 + i, argv: []string{"bash", script, "ctl", fmt.Sprintf("c%d", i)}})
		}
		return b
	}
	return nil
}

// selectedBrokers are the brokers WARREN_FAULTS_BROKERS names, in the
// order of allBrokers.
func selectedBrokers(t *testing.T) []string {
	t.Helper()
	v := strings.Fields(os.Getenv(brokersEnv))
	if len(v) == 0 {
		return allBrokers
	}
	for _, name := range v {
		if !slices.Contains(allBrokers, name) {
			t.Fatalf("%s=%q: %q is not one of %s", brokersEnv, os.Getenv(brokersEnv), name, strings.Join(allBrokers, ", "))
		}
	}
	var out []string
	for _, name := range allBrokers {
		if slices.Contains(v, name) {
			out = append(out, name)
		}
	}
	return out
}

// onBrokers runs f as a subtest on each of the brokers named that the
// run selects.
func onBrokers(t *testing.T, names []string, f func(t *testing.T, b *broker)) {
	t.Helper()
	for _, name := range selectedBrokers(t) {
		if !slices.Contains(names, name) {
			continue
		}
		b := brokerNamed(name)
		t.Run(name, func(t *testing.T) { f(t, b) })
	}
}

// onFirstBroker runs f on the first broker the run selects: for faults
// that strike something other than the broker.
func onFirstBroker(t *testing.T, f func(t *testing.T, b *broker)) {
	t.Helper()
	onBrokers(t, selectedBrokers(t)[:1], f)
}

func (b *broker) amqpURL() string { return fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", b.amqpPort) }
func (b *broker) mgmtURL() string { return fmt.Sprintf("http://127.0.0.1:%d", b.mgmtPort) }

// node is the node called name.
func (b *broker) node(t *testing.T, name string) brokerNode {
	t.Helper()
	for _, n := range b.nodes {
		if n.name == name {
			return n
		}
	}
	t.Fatalf("broker %s has no node %s", b.name, name)
	return brokerNode{}
}

// ctl runs rabbitmqctl on node n and fails the test when it fails.
func (n brokerNode) ctl(t *testing.T, args ...string) {
	t.Helper()
	argv := append(slices.Clone(n.argv), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("rabbitmqctl %s on %s: %v\n%s", strings.Join(args, " "), n.name, err, out)
	}
}

// stopNode stops the RabbitMQ application on node n; the test's cleanup
// starts it again even when the test fails before startNode.
func (b *broker) stopNode(t *testing.T, n brokerNode) {
	t.Helper()
	t.Cleanup(func() { b.startNode(t, n) })
	n.ctl(t, "stop_app")
}

// startNode starts the application on n and waits until AMQP and the
// management API answer on it again, the API with a full overview (it
// answers 500 while the broker's memory monitor is down), and, on a
// cluster, until every node is running. Starting a running node does
// nothing.
func (b *broker) startNode(t *testing.T, n brokerNode) {
	t.Helper()
	n.ctl(t, "start_app")
	deadline := time.Now().Add(2 * time.Minute)
	for !n.up() || !b.allRunning() {
		if time.Now().After(deadline) {
			t.Fatalf("RabbitMQ %s node %s did not come back within two minutes", b.name, n.name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stopBroker and startBroker stop and start the node warren talks to.
func (b *broker) stopBroker(t *testing.T)  { t.Helper(); b.stopNode(t, b.nodes[0]) }
func (b *broker) startBroker(t *testing.T) { t.Helper(); b.startNode(t, b.nodes[0]) }

func (n brokerNode) up() bool {
	conn, err := amqp.Dial(fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", n.amqpPort))
	if err != nil {
		return false
	}
	conn.Close()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/api/overview", n.mgmtPort), nil)
	if err != nil {
		return false
	}
	req.SetBasicAuth("guest", "guest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// allRunning reports whether every node of the broker answers.
func (b *broker) allRunning() bool {
	for _, n := range b.nodes {
		if !n.up() {
			return false
		}
	}
	return true
}

// closeConnections closes every connection of the vhost from the broker's
// side.
func (b *broker) closeConnections(t *testing.T, vhost string) {
	t.Helper()
	b.nodes[0].ctl(t, "close_all_connections", "-p", vhost, "fault injection")
}
