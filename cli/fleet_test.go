//go:build integration

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// The fleet reads both brokers `make services` runs, RabbitMQ 3.10 and
// 4.3, and a context on a closed port: the two answer with their
// versions, the third is a row that says it did not, and holds neither
// back.
func TestStatusAllContextsJSONReadsTheFleet(t *testing.T) {
	other := map[string][2]string{ // the broker this pass does not test, as make services runs it
		"3.10": {"amqp://127.0.0.1:5673/", "http://127.0.0.1:15673"},
		"4.3":  {"amqp://127.0.0.1:5672/", "http://127.0.0.1:15672"},
	}[testkit.Broker]
	// A context that names a vhost counts that vhost's dead letters
	// alone, as its dashboard shows them.
	vhost := testkit.Vhost(t, "fleet")
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", []amqp.Publishing{{Body: []byte("1")}, {Body: []byte("2")}, {Body: []byte("3")}})
	// Another vhost's queue, which the context naming a vhost leaves out
	// and the one naming none counts, on a broker with nothing else.
	testkit.Declare(t, testkit.Channel(t, testkit.Dial(t, testkit.Vhost(t, "fleet-other"))), "elsewhere", nil)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warren.toml")
	t.Setenv("WARREN_FLEET_TEST_PASSWORD", "guest")
	ctx := func(name, amqp, mgmt, env string) string {
		return fmt.Sprintf("\n[contexts.%s]\namqp_url = %q\nmanagement_url = %q\nusername = \"guest\"\npassword_env = \"WARREN_FLEET_TEST_PASSWORD\"\nenvironment = %q\naudit = \"file:%s\"\n",
			name, amqp, mgmt, env, filepath.Join(dir, name+".jsonl"))
	}
	text := `current_context = "here"` + "\n" + ctx("here", testAMQP, testMgmt, "prod") + ctx("there", other[0], other[1], "staging") +
		ctx("down", "amqp://127.0.0.1:1/", "http://127.0.0.1:1", "dev") + ctx("one", testAMQP, testMgmt, "dev") + fmt.Sprintf("vhost = %q\n", vhost)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// The management API counts the dead letters within a statistics
	// interval: read until it has.
	// A context that does not answer fails the command once every row
	// is printed: a script's && stops, its JSON is whole. On a loaded
	// machine the other broker may miss its time once too: the words
	// are judged on the last read.
	const downOnly = "1 of the 4 contexts did not answer (down)"
	var out string
	var err error
	var errOut string
	rows := map[string]domain.FleetRow{}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		var o string
		o, errOut, err = runAction(t, cfg, newStatusCmd, "--all-contexts", "--json")
		if err == nil || app.ExitCode(err) != app.ExitFailure {
			t.Fatalf("with one context down: %v (exit %d)\n%s; want exit 1 naming it", err, app.ExitCode(err), errOut)
		}
		var got struct {
			Contexts []domain.FleetRow `json:"contexts"`
		}
		if err := json.Unmarshal([]byte(o), &got); err != nil {
			t.Fatalf("%q: %v", o, err)
		}
		out = o
		for _, r := range got.Contexts {
			rows[r.Context] = r
		}
		if (rows["one"].DLQMessages == 3 && strings.Contains(err.Error(), downOnly)) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(err.Error(), downOnly) {
		t.Errorf("with one context down: %v\n%s; want %q", err, errOut, downOnly)
	}
	if one := rows["one"]; one.Err != "" || one.Vhost != vhost || one.DLQMessages != 3 || one.Queues != 2 || one.DeepestDLQ != vhost+"/orders.dlq" {
		t.Errorf("one: %+v, want vhost %s alone: its 2 queues, 3 dead letters in orders.dlq", one, vhost)
	}
	if here := rows["here"]; here.Vhost != "" || here.DLQMessages < 3 || here.Queues < 3 {
		t.Errorf("here: %+v, want every vhost of the broker counted", here)
	}
	versions := map[string]bool{}
	for _, name := range []string{"here", "there"} {
		r := rows[name]
		if r.Err != "" || r.Version == "" || r.Nodes < 1 || r.NodesRunning != r.Nodes || r.ReadAt.IsZero() {
			t.Errorf("%s: %+v, want the broker read", name, r)
		}
		versions[strings.Join(strings.Split(r.Version, ".")[:2], ".")] = true
	}
	if !versions["3.10"] || !versions["4.3"] {
		t.Errorf("versions read %v, want both brokers, 3.10 and 4.3", versions)
	}
	if d := rows["down"]; d.Err == "" || d.Version != "" || d.Environment != "dev" {
		t.Errorf("down: %+v, want a row that says it did not answer", d)
	}
	// A context that did not answer was read at no time: a script sees
	// no read_at rather than the year 1.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, `"read_at"`) && strings.Contains(line, "0001-01-01") {
			t.Errorf("a read_at of the zero time: %s", line)
		}
	}
	if rows["here"].Environment != "prod" {
		t.Errorf("here: environment %q", rows["here"].Environment)
	}
	// One read measures no growth: every row says it is unknown (null),
	// not 0, and the document says what in_trouble leaves out.
	if n := strings.Count(out, `"dlq_growth": null`); n != 4 {
		t.Errorf("%d rows with dlq_growth null, want all 4: one read measures no growth\n%s", n, out)
	}
	var doc struct {
		GrowthJudged *bool  `json:"growth_judged"`
		Note         string `json:"note"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.GrowthJudged == nil || *doc.GrowthJudged || !strings.Contains(doc.Note, "status --check") {
		t.Errorf("growth_judged %v, note %q (%v): want false and a note naming status --check", doc.GrowthJudged, doc.Note, err)
	}
}
