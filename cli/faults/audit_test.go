//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// auditView is what the audit log says about the operations of one run.
type auditView struct {
	ops        int
	incomplete int
	// unknown are the logical IDs the log leaves open: an unknown
	// outcome, or no outcome at all in an operation without a final
	// record (docs/OPERATIONS.md: "An incomplete operation").
	unknown map[string]bool
	// ackFailed are confirmed IDs whose source acknowledgement failed
	// (detail source_ack_failed).
	ackFailed map[string]bool
	// outcomes are the outcomes recorded for each logical ID.
	outcomes map[string][]string
	lastSeq  int64
}

// readAudit reads the records after seq from the config's store.
func readAudit(t *testing.T, c *config, after int64) auditView {
	t.Helper()
	st, err := audit.Open(c.auditSpec, c.auditDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type opRecords struct {
		intent   []string
		outcomes map[string][]string
		// publishing counts, per logical ID, the copies a streamed
		// operation recorded before publishing them; settled, the
		// outcomes recorded for its copies.
		publishing, settled map[string]int
		final               bool
	}
	v := auditView{unknown: map[string]bool{}, ackFailed: map[string]bool{}, outcomes: map[string][]string{}, lastSeq: after}
	byOp := map[string]*opRecords{}
	var order []string
	err = st.Scan(context.Background(), func(r audit.Record) error {
		if r.Seq <= after {
			return nil
		}
		v.lastSeq = r.Seq
		if r.Operation == "" {
			return nil
		}
		op := byOp[r.Operation]
		if op == nil {
			op = &opRecords{outcomes: map[string][]string{}, publishing: map[string]int{}, settled: map[string]int{}}
			byOp[r.Operation] = op
			order = append(order, r.Operation)
		}
		switch r.Outcome {
		case domain.OutcomeIntent:
			op.intent = r.LogicalIDs
		case domain.OutcomeFinal:
			op.final = true
		case domain.OutcomePublishing:
			for _, lid := range r.LogicalIDs {
				op.publishing[lid]++
			}
		case domain.OutcomeResumed:
		default:
			if r.Outcome != domain.OutcomeSkippedApplied && r.Outcome != domain.OutcomeDeduplicated {
				for _, lid := range r.LogicalIDs {
					op.settled[lid]++
				}
			}
			op.outcomes[r.Outcome] = append(op.outcomes[r.Outcome], r.LogicalIDs...)
			for _, lid := range r.LogicalIDs {
				v.outcomes[lid] = append(v.outcomes[lid], r.Outcome)
			}
		}
		if failed := r.Detail["source_ack_failed"]; failed != "" && r.Outcome == domain.OutcomeConfirmed {
			var ids []string
			if err := json.Unmarshal([]byte(failed), &ids); err != nil {
				t.Errorf("seq %d: source_ack_failed %q: %v", r.Seq, failed, err)
			}
			for _, id := range ids {
				v.ackFailed[id] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the audit log (%s): %v", st.Describe(), err)
	}
	for _, id := range order {
		op := byOp[id]
		v.ops++
		for _, lid := range op.outcomes[domain.OutcomeUnknown] {
			v.unknown[lid] = true
		}
		// A copy recorded as publishing without an outcome of its own may
		// have reached the destination: a resume that publishes it again
		// reports it as a possible duplicate.
		for lid, n := range op.publishing {
			if n > op.settled[lid] {
				v.unknown[lid] = true
			}
		}
		if op.final {
			continue
		}
		v.incomplete++
		settled := map[string]bool{}
		for outcome, ids := range op.outcomes {
			if outcome == domain.OutcomeUnknown {
				continue
			}
			for _, lid := range ids {
				settled[lid] = true
			}
		}
		for _, lid := range op.intent {
			if !settled[lid] {
				v.unknown[lid] = true
			}
		}
	}
	return v
}

// verifyChain runs `warren audit verify`, which must find the chain intact.
func verifyChain(t *testing.T, c *config) {
	t.Helper()
	ch := run(t, c, "audit", "verify")
	if ch.code() != 0 || !strings.HasPrefix(ch.stdout.String(), "ok: ") {
		t.Errorf("audit verify: exit %d, stdout %q, stderr %q", ch.code(), ch.stdout.String(), ch.stderr.String())
	}
}
