package audit

import (
	"context"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

func TestOpBuildersFollowTheRecordConventions(t *testing.T) {
	op := Op{ID: "op-1", Action: "replay", Operator: "ana", Host: "ops-1", Context: "prod",
		Vhost: "/", Queue: "orders.dlq", Target: "amq.default/orders"}
	intent := op.Intent(Plan{Selected: 37, Destinations: []string{"orders"}, Bytes: 4096, SkippedApplied: 5,
		Extra: map[string]string{"filter": `reason == "rejected"`}})
	wantDetail := map[string]string{"selected": "37", "destinations": `["orders"]`, "bytes": "4096",
		"skipped_applied": "5", "filter": `reason == "rejected"`}
	if intent.Outcome != domain.OutcomeIntent || !reflect.DeepEqual(intent.Detail, wantDetail) {
		t.Fatalf("intent = %+v", intent)
	}
	if d := Destinations(intent.Detail); !reflect.DeepEqual(d, []string{"orders"}) {
		t.Fatalf("Destinations = %v", d)
	}
	out := op.Outcome(domain.OutcomeReturned, []string{"m1", "m2"}, []string{"e1", "e2"}, nil)
	final := op.Final(map[string]int{domain.OutcomeConfirmed: 30, domain.OutcomeReturned: 2})
	for _, r := range []Record{intent, out, final} {
		if r.Operation != "op-1" || r.Action != "replay" || r.Operator != "ana" || r.Host != "ops-1" ||
			r.Context != "prod" || r.Vhost != "/" || r.Queue != "orders.dlq" || r.Target != "amq.default/orders" {
			t.Fatalf("header fields not stamped: %+v", r)
		}
		if validate(r) != nil {
			t.Fatalf("builder made an invalid record: %+v", r)
		}
	}
	if final.Outcome != domain.OutcomeFinal || final.Detail["confirmed"] != "30" || final.Detail["returned"] != "2" {
		t.Fatalf("final = %+v", final)
	}
	if !regexp.MustCompile(`^\d{8}T\d{6}Z-[0-9a-f]{8}$`).MatchString(NewOperationID()) {
		t.Fatalf("NewOperationID = %q", NewOperationID())
	}
}

func TestSummariesGroupByOperation(t *testing.T) {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	done := Op{ID: "a", Action: "replay", Operator: "ana", Vhost: "/", Queue: "orders.dlq", Target: "orders"}
	cut := Op{ID: "b", Action: "quarantine", Operator: "bo", Vhost: "v", Queue: "pay.dlq", Target: "pay.dlq.quarantine"}
	export := Op{ID: "c", Action: "export", Operator: "ana", Vhost: "/", Queue: "orders.dlq", Target: "/srv/orders.jsonl"}
	stamp := func(r Record, m int) Record { r.Time, r.Seq = at(m), int64(m); return r }
	records := []Record{
		stamp(done.Intent(Plan{Selected: 4}), 1),
		stamp(cut.Intent(Plan{Selected: 9}), 2),
		stamp(done.Outcome(domain.OutcomeConfirmed, []string{"m1", "m2"}, []string{"e1", "e2"}, nil), 3),
		stamp(cut.Outcome(domain.OutcomeConfirmed, []string{"m9"}, nil, nil), 4),
		stamp(Record{Action: "config", Outcome: "changed"}, 5),
		stamp(done.Outcome(domain.OutcomeSkippedApplied, nil, []string{"e3"}, nil), 6),
		stamp(done.Outcome(domain.OutcomeUnknown, nil, nil, map[string]string{"offset": "17"}), 7),
		stamp(done.Final(map[string]int{domain.OutcomeConfirmed: 2}), 8),
		// An export is an operation of one record, its final.
		stamp(export.Final(map[string]int{domain.OutcomeExported: 30, "selected": 30, "read": 31}), 9),
	}
	finished, exported := at(8), at(9)
	want := []domain.OperationSummary{
		{Operation: "a", Action: "replay", Vhost: "/", Queue: "orders.dlq", Target: "orders", Operator: "ana",
			Started: at(1), Finished: &finished, Selected: 4, FirstSeq: 1, LastSeq: 8,
			Counts: map[string]int{domain.OutcomeConfirmed: 2, domain.OutcomeSkippedApplied: 1, domain.OutcomeUnknown: 1}},
		{Operation: "b", Action: "quarantine", Vhost: "v", Queue: "pay.dlq", Target: "pay.dlq.quarantine", Operator: "bo",
			Started: at(2), Selected: 9, FirstSeq: 2, LastSeq: 4,
			Counts: map[string]int{domain.OutcomeConfirmed: 1}},
		{Operation: "c", Action: "export", Vhost: "/", Queue: "orders.dlq", Target: "/srv/orders.jsonl", Operator: "ana",
			Started: at(9), Finished: &exported, Selected: 30, FirstSeq: 9, LastSeq: 9,
			Counts: map[string]int{domain.OutcomeExported: 30}},
	}
	got := Summaries(records)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Summaries:\n got %+v\nwant %+v", got, want)
	}
	if got[0].Incomplete() || !got[1].Incomplete() || got[2].Incomplete() {
		t.Fatal("only the operation without a final record is incomplete")
	}
}

// A walk that streamed the queue without a preview wrote in its intent
// how many it would read; its final says how many it chose, and the
// summary (audit tail, the audit screen) says that. A cancelled run
// reads as cancelled, not done. A resume's final counts its own run
// alone, so a resumed operation keeps its intent's count.
func TestAStreamedWalkIsSummarisedByWhatItChose(t *testing.T) {
	op := Op{ID: "w", Action: "replay", Queue: "work.dlq"}
	intent := op.Intent(Plan{Selected: 9, Extra: map[string]string{"streamed": "true", "filter": `logical_id == "ev-1"`}})
	final := op.Final(map[string]int{domain.OutcomeConfirmed: 1, "selected": 1})
	got := Summaries([]Record{intent, op.Outcome(domain.OutcomeConfirmed, []string{"m1"}, []string{"ev-1"}, nil), final})
	if got[0].Selected != 1 || got[0].State() != "done" {
		t.Fatalf("a streamed walk that chose 1 of 9: selected %d, state %s", got[0].Selected, got[0].State())
	}

	cancelled := op.Final(map[string]int{domain.OutcomeConfirmed: 148, "not_sent": 352, "selected": 500})
	cancelled.Detail["cancelled"] = "true"
	if got := Summaries([]Record{intent, cancelled}); got[0].Selected != 500 || got[0].State() != "cancelled" {
		t.Fatalf("a cancelled walk: selected %d, state %s; want 500, cancelled", got[0].Selected, got[0].State())
	}

	failed := op.Final(map[string]int{"not_sent": 9, "selected": 9})
	failed.Detail["error"] = "publishing stopped after 0 messages: --canary cannot judge the copies"
	if got := Summaries([]Record{intent, failed}); got[0].State() != "failed" || got[0].Failed != failed.Detail["error"] {
		t.Fatalf("a run that ended with an error: state %s, failed %q; want failed, with its error", got[0].State(), got[0].Failed)
	}

	resumed := op.Outcome(domain.OutcomeResumed, nil, nil, nil)
	if got := Summaries([]Record{intent, resumed, op.Final(map[string]int{"selected": 3})}); got[0].Selected != 9 {
		t.Fatalf("a resumed walk: selected %d, want its intent's 9", got[0].Selected)
	}

	previewed := op.Intent(Plan{Selected: 4})
	if got := Summaries([]Record{previewed, op.Final(map[string]int{"selected": 2})}); got[0].Selected != 4 {
		t.Fatalf("a previewed walk: selected %d, want its intent's 4", got[0].Selected)
	}
}

func TestOperationRecordsSurviveAStore(t *testing.T) {
	ctx := context.Background()
	s, _ := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	op := Op{ID: NewOperationID(), Action: "replay", Operator: "ana", Queue: "orders.dlq"}
	for _, r := range []Record{
		op.Intent(Plan{Selected: 1, Destinations: []string{"orders"}}),
		op.Outcome(domain.OutcomeConfirmed, []string{"m1"}, []string{"e1"}, map[string]string{"body_sha256": BodyDigest([]byte("{}")), "body_size": "2"}),
		op.Final(map[string]int{domain.OutcomeConfirmed: 1}),
	} {
		if _, err := s.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sums := Summaries(scanAll(t, s))
	if len(sums) != 1 || sums[0].Incomplete() || sums[0].Counts[domain.OutcomeConfirmed] != 1 || sums[0].Selected != 1 {
		t.Fatalf("summaries = %+v", sums)
	}
	mustVerify(t, s, 3)
}
