//go:build faults

package faults

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// runner drives the runs of one fault on one scene and config, and keeps
// the fault's row of the table.
type runner struct {
	s       *scene
	c       *config
	row     *row
	auditAt int64 // last audit seq already accounted for
	runs    int
}

func newRunner(t *testing.T, b *broker, fault, vhostName string, su setup) *runner {
	t.Helper()
	s := newScene(t, b, vhostName)
	r := &runner{s: s, c: writeConfig(t, s, su), row: &row{broker: b.name, fault: fault}}
	table = append(table, r.row)
	return r
}

// point picks a random moment of a replay: the destination depth at
// which the fault strikes, between lo and hi parts of the DLQ.
func point(lo, hi float64) int {
	return int(float64(messages) * (lo + rand.Float64()*(hi-lo)))
}

// replayArgs are the arguments of an unattended replay of the DLQ.
func replayArgs(extra ...string) []string {
	return append([]string{"dlq", "replay", dlqQueue, "--yes", "--json"}, extra...)
}

func quarantineArgs(extra ...string) []string {
	return append([]string{"dlq", "quarantine", dlqQueue, "--yes", "--json", "--reason", "fault injection"}, extra...)
}

// outcome is what one run left behind.
type outcome struct {
	lost, dup []string
	inDLQ     int
	moved     int
	view      auditView
}

// count waits for the scene to settle, takes every message out of the DLQ,
// the work queue and the parking queue, and checks the rules of the
// issue: no logical ID lost, a repeated one only where the audit log
// leaves it unknown, and a chain that verifies. what describes the run
// for the log.
func (r *runner) count(t *testing.T, ch *child, what string) outcome {
	t.Helper()
	r.runs++
	r.s.settle(t)
	seen := map[string]int{}
	var o outcome
	for _, q := range []string{dlqQueue, workQueue, parkingQueue} {
		ids := r.s.drain(t, q)
		if q == dlqQueue {
			o.inDLQ = len(ids)
		} else {
			o.moved += len(ids)
		}
		for _, id := range ids {
			seen[id]++
		}
	}
	o.view = readAudit(t, r.c, r.auditAt)
	r.auditAt = o.view.lastSeq
	verifyChain(t, r.c)
	for i := range messages {
		id := logicalID(i)
		switch n := seen[id]; {
		case n == 0:
			o.lost = append(o.lost, id)
		case n > 1:
			o.dup = append(o.dup, id)
		}
		delete(seen, id)
	}
	for id := range seen {
		t.Errorf("run %d: a message with logical ID %q that the DLQ never held", r.runs, id)
	}
	t.Logf("run %d: %s; exit %d; %d in the DLQ, %d moved; lost %d, duplicated %d, unknown %d (%d operations, %d incomplete)",
		r.runs, what, ch.code(), o.inDLQ, o.moved, len(o.lost), len(o.dup), len(o.view.unknown), o.view.ops, o.view.incomplete)
	if len(o.lost) > 0 {
		t.Errorf("run %d: %d logical IDs lost, e.g. %s", r.runs, len(o.lost), sample(o.lost))
	}
	var unmarked, ackFailed []string
	for _, id := range o.dup {
		switch {
		case o.view.unknown[id]:
		case o.view.ackFailed[id]:
			ackFailed = append(ackFailed, id)
		default:
			unmarked = append(unmarked, id)
		}
	}
	if len(ackFailed) > 0 {
		t.Errorf("run %d: %d duplicated logical IDs are recorded as confirmed (detail source_ack_failed), not unknown, e.g. %s",
			r.runs, len(ackFailed), sample(ackFailed))
	}
	if len(unmarked) > 0 {
		for i, id := range unmarked {
			unmarked[i] = fmt.Sprintf("%s (recorded %s)", id, strings.Join(o.view.outcomes[id], ", "))
		}
		t.Errorf("run %d: %d duplicated logical IDs the audit log does not mark unknown, e.g. %s", r.runs, len(unmarked), sample(unmarked))
	}
	if t.Failed() {
		t.Logf("warren stdout:\n%s\nstderr:\n%s", ch.stdout.String(), ch.stderr.String())
	}
	return o
}

// faultRun counts a run the fault struck and adds it to the table.
func (r *runner) faultRun(t *testing.T, ch *child, what string) outcome {
	t.Helper()
	r.resume(t)
	o := r.count(t, ch, what)
	r.row.runs++
	r.row.messages += messages
	r.row.lost += len(o.lost)
	r.row.dup += len(o.dup)
	r.row.maxDup = max(r.row.maxDup, len(o.dup))
	if len(o.dup) > 2048 {
		t.Errorf("run %d: %d duplicated logical IDs, more than one confirm window (2048)", r.runs, len(o.dup))
	}
	r.row.unknowns += len(o.view.unknown)
	return o
}

// resume finishes what the fault left open, as the runbook says: `warren
// dlq resume` removes the twins of recorded confirms and moves the rest.
// An operation that finished leaves it nothing to do (exit 2).
func (r *runner) resume(t *testing.T) {
	t.Helper()
	r.s.settle(t)
	ch := run(t, r.c, "dlq", "resume", dlqQueue, "--yes", "--json")
	switch {
	case ch.code() == 0:
		r.row.resumed++
		t.Logf("resumed: %s", strings.TrimSpace(ch.stdout.String()))
	case ch.code() == 2 && strings.Contains(ch.stderr.String(), "no incomplete operation"):
	default:
		t.Errorf("dlq resume: exit %d\nstdout:\n%s\nstderr:\n%s", ch.code(), ch.stdout.String(), ch.stderr.String())
	}
}

// recover runs one replay without a fault after the fault's runs: warren
// must finish the job on the same audit store, moving every message once
// but the left ones the inbox reports applied.
func (r *runner) recover(t *testing.T, left int, extra ...string) {
	t.Helper()
	r.s.fill(t)
	ch := run(t, r.c, replayArgs(extra...)...)
	if ch.code() != 0 {
		t.Errorf("replay after the faults: exit %d\nstdout:\n%s\nstderr:\n%s", ch.code(), ch.stdout.String(), ch.stderr.String())
	}
	o := r.count(t, ch, "replay without a fault")
	if o.inDLQ != left || len(o.dup) != 0 || o.view.incomplete != 0 {
		t.Errorf("replay without a fault left %d in the DLQ (want %d), %d duplicated, %d incomplete operations", o.inDLQ, left, len(o.dup), o.view.incomplete)
	}
}

func sample(ids []string) string {
	sort.Strings(ids)
	if len(ids) > 10 {
		return strings.Join(ids[:10], ", ") + fmt.Sprintf(" and %d more", len(ids)-10)
	}
	return strings.Join(ids, ", ")
}
