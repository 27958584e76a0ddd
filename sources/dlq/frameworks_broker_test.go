//go:build integration

package dlq

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// The frameworks that write error queues themselves, run for real: rascal
// (Node, testdata/frameworks/rascal, the versions pinned in its
// package.json) and Watermill (Go, testdata/frameworks/watermill, its own
// module). Each runs as a consumer whose handler fails, against the
// test's vhost, and writes its error messages as it really does; the
// tests then read them with a browse session and a scan, as warren does,
// and check what the convention tables in frameworks.go make of them
// (testkit prepares and runs the programs). The fixtures in frameworks_test.go are built after the frameworks'
// source; these are the frameworks themselves.
//
// What the pinned versions wrote, as the tests saw it:
//
//   - rascal 21.0.1 on amqplib 0.10.9, forward strategy: to orders_error,
//     through the default exchange, one header "rascal", a table:
//     originalQueue "orders", originalVhost, originalExchange "",
//     originalRoutingKey "orders", restoreRoutingHeaders true,
//     redeliveries 0, error {message "Order 1001 not found", code
//     "ENOTFOUND"}, recovery {orders {forwarded 1}} (with two republishes
//     first: {orders {republished 2, forwarded 1}}); and a header "CC"
//     ["orders.orders"], rascal's carbon copy to <queue>.<routing key>.
//   - rascal 21.0.1, republish then nack: the same "rascal" table with
//     recovery {orders {republished 2}}, and the broker's x-death for
//     orders (rejected, count 1); with immediateNack the recovery table
//     is {orders {immediateNack true, xDeath {count 0, time {value 0}}}},
//     the republish count gone.
//   - Watermill v1.5.1 with watermill-amqp v3.0.2, PoisonQueue: to
//     payments_error, string headers reason_poisoned "charge 5001:
//     insufficient funds", topic_poisoned "payments", handler_poisoned
//     "charge", subscriber_poisoned "amqp.Subscriber" and
//     _watermill_message_uuid; no count of tries, no message_id.

// frameworkQueue describes an error queue or DLQ the test declared.
func frameworkQueue(t testing.TB, vhost, name string) domain.QueueInfo {
	return domain.QueueInfo{Vhost: vhost, Name: name, Type: domain.TypeClassic, DeliveryLimit: -1, BrokerVersion: testkit.Version(t)}
}

// expected is how each message a framework wrote should read.
type expected struct {
	convention, kind, reason string
	originQueue              string
	originExchange           string
	routingKey               string
	errorType                string
	// groupType is the failure group's type: the error type, else the
	// failure's kind.
	groupType string
	also      []string
	// message is the error message of the letter with this logical ID.
	message func(id string) string
	// attempts is the letter's attempt count; failureAttempts, if set,
	// the convention's own.
	attempts        func(id string) int
	failureAttempts func(id string) int
	// attemptsWhy words where the count comes from, for a mismatch.
	attemptsWhy string
	// normalized is the group's message.
	normalized string
}

// checkLetters checks every browsed letter, each logical ID once, and
// that they all fall in one failure group; it returns that group's ID.
func checkLetters(t *testing.T, letters []domain.DeadLetter, ids []string, w expected) string {
	t.Helper()
	var got []string
	for _, d := range letters {
		got = append(got, d.LogicalID)
	}
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Fatalf("the error queue holds %v, want %v", got, ids)
	}
	groupID := domain.Fingerprint{Convention: w.convention, Origin: w.originQueue, Type: w.groupType, Message: w.normalized}.ID()
	var keys []string
	if w.routingKey != "" {
		keys = []string{w.routingKey}
	}
	// Each check is reported once, with every letter it failed for and
	// the headers of the first, as the framework wrote them.
	var checks []string
	problems := map[string][]string{}
	first := map[string]domain.DeadLetter{}
	fail := func(check string, d domain.DeadLetter, format string, args ...any) {
		if _, ok := problems[check]; !ok {
			checks = append(checks, check)
			first[check] = d
		}
		problems[check] = append(problems[check], d.LogicalID+": "+fmt.Sprintf(format, args...))
	}
	for _, d := range letters {
		f := d.Failure
		if f.Convention != w.convention || f.Kind != w.kind || f.ErrorType != w.errorType || f.ErrorMessage != w.message(d.LogicalID) {
			fail("failure", d, "convention %q, kind %q, type %q, message %q; want %q, %q, %q, %q",
				f.Convention, f.Kind, f.ErrorType, f.ErrorMessage, w.convention, w.kind, w.errorType, w.message(d.LogicalID))
		}
		if f.OriginQueue != w.originQueue || f.OriginExchange != w.originExchange || f.OriginRoutingKey != w.routingKey {
			fail("failure's origin", d, "queue %q, exchange %q, routing key %q; want %q, %q, %q",
				f.OriginQueue, f.OriginExchange, f.OriginRoutingKey, w.originQueue, w.originExchange, w.routingKey)
		}
		if f.Missing != nil || !slices.Equal(f.Also, w.also) {
			fail("missing and other conventions", d, "missing %q, also %q; want none missing, also %q", f.Missing, f.Also, w.also)
		}
		if d.Reason != w.reason || d.OriginQueue != w.originQueue || d.Origin() != w.originQueue || !slices.Equal(d.RoutingKeys, keys) {
			fail("letter's reason and origin", d, "reason %q, origin queue %q (%q), routing keys %q; want %q, %q, %q",
				d.Reason, d.OriginQueue, d.Origin(), d.RoutingKeys, w.reason, w.originQueue, keys)
		}
		if w.failureAttempts != nil {
			if want := w.failureAttempts(d.LogicalID); f.Attempts != want {
				fail("the convention's attempts", d, "%d read, want %d (%s)", f.Attempts, want, w.attemptsWhy)
			}
		}
		if want := w.attempts(d.LogicalID); d.Attempts != want {
			fail("the letter's attempts", d, "%d read, want %d (%s)", d.Attempts, want, w.attemptsWhy)
		}
		if d.Group != groupID {
			fail("group", d, "%s, want %s, the group of %q", d.Group, groupID, w.normalized)
		}
	}
	for _, c := range checks {
		d := first[c]
		t.Errorf("%s:\n\t%s\n%s's headers as written: %#v", c, strings.Join(problems[c], "\n\t"), d.LogicalID, d.Headers)
	}
	return groupID
}

// checkScan scans the queue and checks its counts: n letters of one
// convention, reason, origin and failure group.
func checkScan(t *testing.T, conn *amqp.Connection, q domain.QueueInfo, o Options, n int, w expected, groupID string, attempts map[int]int) {
	t.Helper()
	st, err := Scan(context.Background(), conn, q, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != n || !st.Complete {
		t.Fatalf("scanned %d of %d (complete %v): %v", st.Total, n, st.Complete, st.Notes)
	}
	if want := map[string]int{w.convention: n}; !maps.Equal(st.Conventions, want) {
		t.Errorf("conventions %v, want %v", st.Conventions, want)
	}
	if want := map[string]int{w.reason: n}; !maps.Equal(st.Reasons, want) {
		t.Errorf("reasons %v, want %v", st.Reasons, want)
	}
	if want := map[string]int{w.originQueue: n}; !maps.Equal(st.Origins, want) {
		t.Errorf("origins %v, want %v", st.Origins, want)
	}
	if !maps.Equal(st.Attempts, attempts) {
		t.Errorf("attempts %v, want %v: %s", st.Attempts, attempts, w.attemptsWhy)
	}
	groups := st.Groups.List()
	if len(groups) != 1 {
		t.Fatalf("%d failure groups, want 1: %+v", len(groups), groups)
	}
	g := groups[0]
	want := domain.Fingerprint{Convention: w.convention, Origin: w.originQueue, Type: w.groupType, Message: w.normalized}
	if g.ID != groupID || g.Count != n || g.Fingerprint != want {
		t.Errorf("group %s of %d, %+v; want %s of %d, %+v", g.ID, g.Count, g.Fingerprint, groupID, n, want)
	}
	waitReady(t, conn, q.Name, n)
}

// orderIDs are the message IDs fail.js gives its n orders.
func orderIDs(n int) []string {
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("ord-%d", 1001+i))
	}
	return ids
}

func orderMessage(id string) string {
	return "Order " + strings.TrimPrefix(id, "ord-") + " not found"
}

func runsOf(r testkit.FrameworkRun) func(string) int {
	return func(id string) int { return r.Runs[id] }
}

// histogram counts the letters by their handler runs.
func histogram(r testkit.FrameworkRun) map[int]int {
	h := map[int]int{}
	for _, n := range r.Runs {
		h[n]++
	}
	return h
}

// rascal's forward strategy publishes the failed message to an error
// queue of the application's (here orders_error) with the "rascal"
// table; the broker is not involved, so the rascal convention reads it.
func TestFrameworkRascalForwardsToAnErrorQueue(t *testing.T) {
	const n = 5
	testkit.RascalDir(t) // fails here, before any vhost, when Node.js is missing
	for _, c := range []struct{ name, mode string }{
		// [{strategy: 'forward', publication: 'to_error'}]: one try, one
		// forward (recovery.orders.forwarded 1).
		{"forward", "forward"},
		// [{strategy: 'republish', attempts: 2}, {strategy: 'forward', …}]:
		// three tries, two republishes and one forward
		// (recovery.orders.republished 2, forwarded 1).
		{"republish twice, then forward", "retry-forward"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vhost, conn := testVhost(t)
			ch := testkit.Channel(t, conn)
			testkit.Declare(t, ch, "orders", nil)
			testkit.Declare(t, ch, "orders_error", nil)
			r := testkit.RunRascal(t, vhost, c.mode, n)

			w := expected{
				convention: domain.ConventionRascal, kind: domain.KindException, reason: domain.KindException,
				originQueue: "orders", originExchange: "", routingKey: "orders", errorType: "ENOTFOUND", groupType: "ENOTFOUND",
				message: orderMessage, normalized: "Order <n> not found",
				// Every forward and republish follows one failed try, and
				// the forward that put the message here was the last: the
				// tries are the recoveries counted, not one more.
				attempts:        runsOf(r),
				failureAttempts: runsOf(r),
				attemptsWhy:     "the handler ran that many times; every forward and republish follows one failed try, so rascal's recovery counts sum to the tries",
			}
			q := frameworkQueue(t, vhost, "orders_error")
			letters := browseAll(t, conn, q, Options{})
			group := checkLetters(t, letters, orderIDs(n), w)
			for _, d := range letters {
				if d.MessageID != d.LogicalID || string(d.Body) != `{"orderId":`+strings.TrimPrefix(d.LogicalID, "ord-")+`}` {
					t.Errorf("%s: message ID %q, body %s: not the order rascal published", d.LogicalID, d.MessageID, d.Body)
				}
			}
			waitReady(t, conn, "orders_error", n)
			checkScan(t, conn, q, Options{}, n, w, group, histogram(r))
		})
	}
}

// rascal's republish strategy publishes the failed message back to its
// queue, and a nack after it (the nack strategy, or immediateNack on the
// republished copy's arrival) has the broker dead-letter it to the DLQ
// orders' arguments name. The broker's x-death wins; the "rascal" table
// says what broke.
func TestFrameworkRascalRepublishesAndTheBrokerDeadLetters(t *testing.T) {
	const n = 5
	testkit.RascalDir(t) // fails here, before any vhost, when Node.js is missing
	for _, c := range []struct{ name, mode, why string }{
		// [{strategy: 'republish', attempts: 2}, {strategy: 'nack'}]:
		// three tries; the x-death count is 1, rascal's
		// recovery.orders.republished 2.
		{"republish twice, then nack", "republish",
			"the handler ran that many times: rascal's recovery.orders.republished counts two of them, the broker's x-death (count 1) only the nack"},
		// [{strategy: 'republish', immediateNack: true}]: one try; the
		// copy is nacked on arrival without reaching the handler.
		{"republish with immediateNack", "immediate",
			"the handler ran once; the republished copy was nacked on arrival"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vhost, conn := testVhost(t)
			ch := testkit.Channel(t, conn)
			testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": sceneDLQ})
			testkit.Declare(t, ch, sceneDLQ, nil)
			r := testkit.RunRascal(t, vhost, c.mode, n)

			w := expected{
				convention: domain.ConventionBroker, kind: domain.ReasonRejected, reason: domain.ReasonRejected,
				// rascal republishes through the default exchange with
				// the queue's name as routing key.
				originQueue: "orders", originExchange: "", routingKey: "orders", errorType: "ENOTFOUND", groupType: "ENOTFOUND",
				also: []string{domain.ConventionRascal}, message: orderMessage, normalized: "Order <n> not found",
				attempts: runsOf(r), attemptsWhy: c.why,
			}
			q := frameworkQueue(t, vhost, sceneDLQ)
			letters := browseAll(t, conn, q, Options{})
			group := checkLetters(t, letters, orderIDs(n), w)
			for _, d := range letters {
				if d.DeadLetteredAt.IsZero() || len(d.Deaths) != 1 || d.Deaths[0].Count != 1 {
					t.Errorf("%s: dead-lettered at %v, deaths %+v: want the broker's one rejection", d.LogicalID, d.DeadLetteredAt, d.Deaths)
				}
			}
			waitReady(t, conn, sceneDLQ, n)
			checkScan(t, conn, q, Options{}, n, w, group, histogram(r))
		})
	}
}

// Watermill's PoisonQueue middleware republishes the failed message, with
// its metadata as string headers, to the poison topic: with
// watermill-amqp's durable queue config the topic payments is the queue
// payments, reached through the default exchange, and the poison topic
// the queue payments_error.
func TestFrameworkWatermillPoisonQueue(t *testing.T) {
	const n = 5
	testkit.WatermillBin(t) // fails here, before any vhost, when go is missing
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	// As watermill-amqp's subscriber declares its queue: durable, no
	// arguments. Its publisher declares nothing, so the poison queue must
	// exist before anything is poisoned.
	testkit.Declare(t, ch, "payments", nil)
	testkit.Declare(t, ch, "payments_error", nil)
	r := testkit.RunWatermill(t, vhost, n)

	// Watermill's message UUID is a header, not the message_id property,
	// and the body carries the payment's ID.
	o := Options{LogicalID: "header:_watermill_message_uuid"}
	q := frameworkQueue(t, vhost, "payments_error")
	letters := browseAll(t, conn, q, o)
	message := map[string]string{}
	var payments []int
	for _, d := range letters {
		var p struct {
			ID int `json:"id"`
		}
		if err := json.Unmarshal(d.Body, &p); err != nil {
			t.Fatalf("%s: body %q: %v", d.LogicalID, d.Body, err)
		}
		payments = append(payments, p.ID)
		message[d.LogicalID] = fmt.Sprintf("charge %d: insufficient funds", p.ID)
	}
	slices.Sort(payments)
	if want := []int{5001, 5002, 5003, 5004, 5005}; !slices.Equal(payments, want) {
		t.Fatalf("payments_error holds the payments %v, want %v", payments, want)
	}
	w := expected{
		// Watermill writes no error type and no routing key: the topic
		// is the queue, and the group's type is the failure's kind.
		convention: domain.ConventionWatermill, kind: domain.KindException, reason: domain.KindException,
		originQueue: "payments", groupType: domain.KindException,
		message:    func(id string) string { return message[id] },
		normalized: "charge <n>: insufficient funds",
		// The handler ran three times (Retry with two retries inside
		// PoisonQueue), but Watermill writes no count of tries: warren
		// says it does not know.
		attempts:    func(string) int { return 0 },
		attemptsWhy: "Watermill writes no count of tries",
	}
	group := checkLetters(t, letters, slices.Sorted(maps.Keys(r.Runs)), w)
	for _, d := range letters {
		if r.Runs[d.LogicalID] != 3 {
			t.Errorf("%s: the handler ran %d times, want 3 (Retry with two retries)", d.LogicalID, r.Runs[d.LogicalID])
		}
	}
	waitReady(t, conn, "payments_error", n)
	checkScan(t, conn, q, o, n, w, group, map[int]int{0: n})
}
