//go:build faults

package faults

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// singleNodes are the brokers of the faults that strike one broker.
var singleNodes = []string{"3.10", "4.3"}

// TestFaultKilledProcessLosesNothing kills warren with SIGKILL at random
// points of a replay (every third run a quarantine, so the parking queue
// is counted too): ten on 3.10, four on 4.3 and on the cluster.
func TestFaultKilledProcessLosesNothing(t *testing.T) {
	onBrokers(t, allBrokers, testKilledProcess)
}

func testKilledProcess(t *testing.T, b *broker) {
	r := newRunner(t, b, "warren killed (SIGKILL)", "kill", setup{})
	runs := 10
	if b.name != "3.10" {
		runs = 4
	}
	for i := range runs {
		r.s.fill(t)
		args, dest, verb := replayArgs(), workQueue, "replay"
		if i%3 == 2 {
			args, dest, verb = quarantineArgs(), parkingQueue, "quarantine"
		}
		k := point(0.02, 0.98)
		ch := start(t, r.c, args...)
		hit := injectAt(t, r.s, ch, dest, k, func() { ch.kill(t) })
		ch.wait(t, time.Minute)
		if !hit {
			t.Errorf("run %d: warren finished before %s held %d messages; the kill missed", i+1, dest, k)
		}
		r.faultRun(t, ch, fmt.Sprintf("%s killed at %s depth %d", verb, dest, k))
	}
	r.recover(t, 0)
}

// TestFaultBrokerRestartLosesNothing stops and starts the RabbitMQ
// application mid-replay.
func TestFaultBrokerRestartLosesNothing(t *testing.T) {
	onBrokers(t, singleNodes, testBrokerRestart)
}

func testBrokerRestart(t *testing.T, b *broker) {
	r := newRunner(t, b, "broker stop_app/start_app", "restart", setup{})
	// Rates low enough that the replay outlasts the injection: rabbitmqctl
	// itself takes 0.7–2 s to act on a busy 2-core machine, more with
	// every broker's faults at once.
	var cut cutShort
	for _, rate := range []string{"1000", "500"} {
		r.s.fill(t)
		k := point(0.05, 0.3)
		ch := start(t, r.c, replayArgs("--rate", rate)...)
		hit := injectAt(t, r.s, ch, workQueue, k, func() { b.stopBroker(t) })
		ch.wait(t, 2*time.Minute)
		b.startBroker(t)
		cut.run(t, hit, ch, "the broker was stopped")
		r.faultRun(t, ch, fmt.Sprintf("broker stopped at %s depth %d, --rate %s", workQueue, k, rate))
	}
	cut.check(t, "the broker was stopped")
	r.recover(t, 0)
}

// cutShort counts the runs a fault injected through rabbitmqctl cut
// short. The tool takes seconds to act on a busy machine, so one may only
// reach the broker after warren confirmed and removed every message:
// that run exits 0 and is counted like the others, since nothing may be
// lost either way. One run at least must have been cut short, or the
// test showed nothing.
type cutShort struct{ runs, cut int }

func (c *cutShort) run(t *testing.T, hit bool, ch *child, fault string) {
	t.Helper()
	c.runs++
	switch {
	case !hit:
		t.Errorf("run %d: warren ended before %s", c.runs, fault)
	case ch.code() == 0:
		t.Logf("run %d: %s only after warren had moved every message (exit 0)", c.runs, fault)
	default:
		c.cut++
	}
}

func (c *cutShort) check(t *testing.T, fault string) {
	t.Helper()
	if c.cut == 0 {
		t.Errorf("none of %d runs was cut short: each time %s after warren had moved every message", c.runs, fault)
	}
}

// TestFaultConnectionsClosedLosesNothing closes every connection of the
// vhost from the broker's side mid-replay.
func TestFaultConnectionsClosedLosesNothing(t *testing.T) {
	onBrokers(t, singleNodes, testConnectionsClosed)
}

func testConnectionsClosed(t *testing.T, b *broker) {
	r := newRunner(t, b, "close_all_connections", "closed", setup{})
	var cut cutShort
	for _, rate := range []string{"1000", "600", "300"} { // low, as for the broker restart
		r.s.fill(t)
		k := point(0.05, 0.25)
		ch := start(t, r.c, replayArgs("--rate", rate)...)
		hit := injectAt(t, r.s, ch, workQueue, k, func() { b.closeConnections(t, r.s.vhost) })
		ch.wait(t, 2*time.Minute)
		cut.run(t, hit, ch, "the connections were closed")
		r.faultRun(t, ch, fmt.Sprintf("connections closed at %s depth %d, --rate %s", workQueue, k, rate))
	}
	cut.check(t, "the connections were closed")
	r.recover(t, 0)
}

// TestFaultMemoryAlarmWaitsAndLosesNothing raises a memory alarm
// mid-replay: the broker blocks every publishing connection until it
// clears. The replay says it is blocked and why, waits, and finishes
// once the alarm is gone.
func TestFaultMemoryAlarmWaitsAndLosesNothing(t *testing.T) {
	onBrokers(t, singleNodes, testMemoryAlarm)
}

func testMemoryAlarm(t *testing.T, b *broker) {
	r := newRunner(t, b, "memory alarm", "alarm", setup{})
	n := b.nodes[0]
	restore := func() {
		// Back to the watermark the broker was configured with.
		n.ctl(t, "eval", "vm_memory_monitor:set_vm_memory_high_watermark(element(2, application:get_env(rabbit, vm_memory_high_watermark))).")
	}
	t.Cleanup(restore)
	for range 2 {
		r.s.fill(t)
		k := point(0.05, 0.3)
		ch := start(t, r.c, replayArgs("--rate", "1000")...)
		hit := injectAt(t, r.s, ch, workQueue, k, func() {
			n.ctl(t, "set_vm_memory_high_watermark", "0.000001")
			// Past the 5 s between the progress lines of a log.
			time.Sleep(8 * time.Second)
			restore()
		})
		ch.wait(t, 2*time.Minute)
		if !hit {
			t.Errorf("the replay ended before the alarm")
		}
		if ch.code() != 0 {
			t.Errorf("a replay the alarm held up exited %d:\n%s", ch.code(), ch.stderr.String())
		}
		if !strings.Contains(ch.stderr.String(), "publishing blocked by the broker") {
			t.Errorf("the replay never said the broker blocked it:\n%s", ch.stderr.String())
		}
		r.faultRun(t, ch, fmt.Sprintf("memory alarm at %s depth %d", workQueue, k))
	}
	// Interrupted while the broker blocks it: the replay ends at once,
	// without waiting for the alarm to clear.
	r.s.fill(t)
	k := point(0.05, 0.3)
	ch := start(t, r.c, replayArgs("--rate", "1000")...)
	var ended bool
	hit := injectAt(t, r.s, ch, workQueue, k, func() {
		n.ctl(t, "set_vm_memory_high_watermark", "0.000001")
		time.Sleep(2 * time.Second)
		if err := ch.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatalf("SIGINT warren: %v", err)
		}
		select {
		case <-ch.done:
			ended = true
		case <-time.After(10 * time.Second):
		}
		restore()
	})
	ch.wait(t, 2*time.Minute)
	if !hit || !ended {
		t.Errorf("interrupted while the broker blocked it, the replay did not end within 10 s (hit %v):\n%s", hit, ch.stderr.String())
	}
	r.faultRun(t, ch, fmt.Sprintf("interrupted during a memory alarm at %s depth %d", workQueue, k))
	r.recover(t, 0)
}

// TestFaultDestinationUnboundLosesNothing removes the binding a --to
// replay routes through, mid-replay: the rest come back as returns.
func TestFaultDestinationUnboundLosesNothing(t *testing.T) {
	onBrokers(t, singleNodes, testDestinationUnbound)
}

func testDestinationUnbound(t *testing.T, b *broker) {
	r := newRunner(t, b, "destination unbound", "unbound", setup{})
	for range 2 {
		r.s.fill(t)
		k := point(0.05, 0.6)
		// At full speed a 4.3 broker routes the whole DLQ in half a
		// second, and the destination's reported depth trails what the
		// broker has routed: capped at 2000 msg/s, at least a second of
		// messages is still to be published when the binding goes.
		ch := start(t, r.c, replayArgs("--to", workExchange+"/"+workQueue, "--rate", "2000")...)
		hit := injectAt(t, r.s, ch, workQueue, k, func() { r.s.unbind(t) })
		ch.wait(t, 2*time.Minute)
		if !hit || ch.code() == 0 {
			t.Errorf("the binding was removed after the replay ended (exit %d)", ch.code())
		}
		o := r.faultRun(t, ch, fmt.Sprintf("unbound at %s depth %d", workQueue, k))
		if o.inDLQ == 0 {
			t.Errorf("every message reached the destination although it was unbound mid-replay")
		}
		r.s.bind(t)
	}
	r.recover(t, 0, "--to", workExchange+"/"+workQueue)
}

// TestFaultDestinationFullLosesNothing caps the destination with
// overflow=reject-publish, so it fills mid-replay and the broker nacks
// the rest.
func TestFaultDestinationFullLosesNothing(t *testing.T) {
	onBrokers(t, singleNodes, testDestinationFull)
}

func testDestinationFull(t *testing.T, b *broker) {
	r := newRunner(t, b, "destination full (reject-publish)", "full", setup{})
	for range 2 {
		r.s.fill(t)
		limit := point(0.1, 0.9)
		r.s.setPolicy(t, fmt.Sprintf(`{"max-length":%d,"overflow":"reject-publish"}`, limit))
		r.s.waitPolicy(t)
		ch := run(t, r.c, replayArgs()...)
		if ch.code() == 0 {
			t.Errorf("replay into a full destination exited 0")
		}
		o := r.faultRun(t, ch, fmt.Sprintf("destination capped at %d", limit))
		if o.moved != limit {
			t.Errorf("the destination took %d messages, want its max-length %d", o.moved, limit)
		}
		r.s.clearPolicy(t)
	}
	r.recover(t, 0)
}

// TestFaultPostgresStoppedUnderTheInboxLosesNothing stops PostgreSQL,
// which holds work's inbox, while a replay browses and while it publishes.
// It strikes PostgreSQL, not the broker: it runs on the first broker only.
func TestFaultPostgresStoppedUnderTheInboxLosesNothing(t *testing.T) {
	onFirstBroker(t, testPostgresStoppedUnderTheInbox)
}

func testPostgresStoppedUnderTheInbox(t *testing.T, b *broker) {
	table := fmt.Sprintf("faults_inbox_%d", rand.Uint32())
	inboxTable(t, table)
	r := newRunner(t, b, "PostgreSQL stopped (inbox)", "inbox", setup{inboxTable: table})
	for i := range 2 {
		r.s.fill(t)
		// pg_ctlcluster takes up to a second or two to stop the cluster:
		// slow enough a rate that the replay outlasts it.
		ch := start(t, r.c, replayArgs("--rate", "1000")...)
		var hit bool
		var what string
		if i == 0 {
			hit = injectWhenBrowsing(t, r.s, ch, func() { stopPostgres(t) })
			what = "PostgreSQL stopped as the browse session opened"
		} else {
			k := point(0.05, 0.5)
			hit = injectAt(t, r.s, ch, workQueue, k, func() { stopPostgres(t) })
			what = fmt.Sprintf("PostgreSQL stopped at %s depth %d", workQueue, k)
		}
		ch.wait(t, 2*time.Minute)
		startPostgres(t)
		if !hit {
			t.Errorf("run %d: warren ended before PostgreSQL was stopped", i+1)
		}
		r.faultRun(t, ch, what)
	}
	r.recover(t, messages/10)
}

// TestFaultPostgresStoppedUnderTheTeamAuditLosesNothing stops PostgreSQL,
// which holds the team audit store, mid-replay: the operation cannot
// record its outcomes, and the chain must still verify. First broker only.
func TestFaultPostgresStoppedUnderTheTeamAuditLosesNothing(t *testing.T) {
	onFirstBroker(t, testPostgresStoppedUnderTheTeamAudit)
}

func testPostgresStoppedUnderTheTeamAudit(t *testing.T, b *broker) {
	table := fmt.Sprintf("faults_audit_%d", rand.Uint32())
	initAuditTable(t, table)
	r := newRunner(t, b, "PostgreSQL stopped (team audit)", "pgaudit", setup{audit: "postgres:" + table})
	var cut cutShort
	for range 2 {
		r.s.fill(t)
		k := point(0.05, 0.5)
		ch := start(t, r.c, replayArgs("--rate", "1000")...) // outlasts pg_ctlcluster stop, as a rule
		hit := injectAt(t, r.s, ch, workQueue, k, func() { stopPostgres(t) })
		ch.wait(t, 2*time.Minute)
		startPostgres(t)
		cut.run(t, hit, ch, "PostgreSQL was stopped")
		r.faultRun(t, ch, fmt.Sprintf("PostgreSQL stopped at %s depth %d", workQueue, k))
	}
	cut.check(t, "PostgreSQL was stopped")
	r.recover(t, 0)
}

// TestFaultAuditFileUnwritableLosesNothing makes the audit file
// unwritable mid-replay; once it is writable again, the chain verifies
// and takes the next operation. First broker only.
func TestFaultAuditFileUnwritableLosesNothing(t *testing.T) {
	onFirstBroker(t, testAuditFileUnwritable)
}

func testAuditFileUnwritable(t *testing.T, b *broker) {
	r := newRunner(t, b, "audit file unwritable", "auditfile", setup{})
	for i := range 2 {
		r.s.fill(t)
		k := point(0.05, 0.5)
		ch := start(t, r.c, replayArgs("--rate", "2000")...)
		var undo func()
		hit := injectAt(t, r.s, ch, workQueue, k, func() { undo = freezeFile(t, auditFile(r.c)) })
		ch.wait(t, 2*time.Minute)
		if undo != nil {
			undo()
		}
		if !hit || ch.code() == 0 {
			t.Errorf("run %d: the audit file was frozen after the replay ended (exit %d)", i+1, ch.code())
		}
		r.faultRun(t, ch, fmt.Sprintf("audit file frozen at %s depth %d", workQueue, k))
	}
	r.recover(t, 0)
}
