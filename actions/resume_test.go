package actions

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// A source handed back after a lost ack keeps its x-death; the same event
// dead in another queue has another. The twin's death tells them apart,
// and a record written before deaths were recorded still matches.
func TestTwinsAreToldApartByWhereTheyDied(t *testing.T) {
	at := time.Date(2026, 12, 3, 2, 50, 0, 0, time.UTC)
	letter := func(queue string) domain.DeadLetter {
		return domain.DeadLetter{MessageID: "e-1", LogicalID: "ev-1", Body: []byte(`{}`),
			Deaths: []domain.Death{{Queue: queue, Reason: "rejected", Exchange: "events", Count: 1, Time: at}}}
	}
	billing, again, shipping := TwinOf(letter("billing")), TwinOf(letter("billing")), TwinOf(letter("shipping"))
	if billing.Death == "" || billing != again {
		t.Fatalf("the same letter read twice gives twins %+v and %+v", billing, again)
	}
	if billing.Death == shipping.Death {
		t.Fatal("letters that died in billing and in shipping have the same death")
	}
	if DeathDigest(domain.DeadLetter{MessageID: "m"}) != "" {
		t.Fatal("a letter without x-death has a death")
	}

	rec := audit.Record{MessageIDs: []string{"e-1"}, LogicalIDs: []string{"ev-1"}, Detail: map[string]string{
		"body_sha256": `["` + billing.BodySHA256 + `"]`, "x_death_sha256": `["` + billing.Death + `"]`}}
	confirmed := map[Twin]int{}
	for _, tw := range twins(rec) {
		confirmed[tw]++
	}
	if take(confirmed, shipping) {
		t.Fatal("shipping's letter was taken for the twin of billing's confirmed copy")
	}
	if !take(confirmed, billing) || take(confirmed, billing) {
		t.Fatal("billing's letter must be taken once for the twin of its confirmed copy")
	}

	delete(rec.Detail, "x_death_sha256")
	old := map[Twin]int{}
	for _, tw := range twins(rec) {
		old[tw]++
	}
	if !take(old, billing) {
		t.Fatal("a record without deaths no longer matches its twin")
	}
}

// A deduplicated record is written before its acks. An operation left
// open after it may have lost them, so the twins it names may still be
// in the DLQ: a resume must take them for twins again, not move them as
// fresh messages and make a second copy.
func TestAResumeStillRemovesTwinsAnEarlierRunRecordedAsDeduplicated(t *testing.T) {
	at := time.Date(2026, 12, 3, 2, 50, 0, 0, time.UTC)
	src := domain.DeadLetter{MessageID: "m-1", LogicalID: "ev-1", Body: []byte(`{}`),
		Deaths: []domain.Death{{Queue: "orders", Reason: "rejected", Count: 1, Time: at}}}
	tw := TwinOf(src)
	named := func(outcome string) audit.Record {
		return audit.Record{Operation: "op-1", Vhost: "/", Queue: "orders.dlq", Action: ActionReplay, Outcome: outcome,
			MessageIDs: []string{tw.MessageID}, LogicalIDs: []string{tw.LogicalID},
			Detail: map[string]string{"body_sha256": `["` + tw.BodySHA256 + `"]`, "x_death_sha256": `["` + tw.Death + `"]`}}
	}
	intent := audit.Record{Operation: "op-1", Vhost: "/", Queue: "orders.dlq", Action: ActionReplay, Outcome: domain.OutcomeIntent,
		Detail: map[string]string{"streamed": "true"}}
	records := []audit.Record{intent, named(domain.OutcomePublishing), named(domain.OutcomeConfirmed), named(domain.OutcomeDeduplicated)}
	r, err := ReadResumption(records, "/", "orders.dlq", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Confirmed[tw] != 1 || len(r.Published) != 0 {
		t.Fatalf("confirmed %v, published %v: want the twin still to remove and nothing to publish again", r.Confirmed, r.Published)
	}
}

// A copy the broker returned or refused is not in the destination: a
// resume publishes its message again without counting it as possibly
// there twice; one whose outcome is unknown may be there, and is counted.
func TestAResumeCountsOnlyUnknownOutcomesAsPossiblyPublished(t *testing.T) {
	at := time.Date(2026, 12, 3, 2, 50, 0, 0, time.UTC)
	named := func(id, outcome string) audit.Record {
		tw := TwinOf(domain.DeadLetter{MessageID: id, LogicalID: id, Body: []byte(id),
			Deaths: []domain.Death{{Queue: "orders", Reason: "rejected", Count: 1, Time: at}}})
		return audit.Record{Operation: "op-1", Vhost: "/", Queue: "orders.dlq", Action: ActionReplay, Outcome: outcome,
			MessageIDs: []string{tw.MessageID}, LogicalIDs: []string{tw.LogicalID},
			Detail: map[string]string{"body_sha256": `["` + tw.BodySHA256 + `"]`, "x_death_sha256": `["` + tw.Death + `"]`}}
	}
	records := []audit.Record{{Operation: "op-1", Vhost: "/", Queue: "orders.dlq", Action: ActionReplay, Outcome: domain.OutcomeIntent,
		Detail: map[string]string{"streamed": "true"}}}
	for _, c := range []struct{ id, outcome string }{
		{"returned", domain.OutcomeReturned}, {"nacked", domain.OutcomeNacked}, {"not-sent", domain.OutcomeNotSent},
		{"unknown", domain.OutcomeUnknown}, {"confirmed", domain.OutcomeConfirmed},
	} {
		records = append(records, named(c.id, domain.OutcomePublishing), named(c.id, c.outcome))
	}
	r, err := ReadResumption(records, "/", "orders.dlq", "")
	if err != nil {
		t.Fatal(err)
	}
	var possibly []string
	for tw, n := range r.Published {
		if n > 0 {
			possibly = append(possibly, tw.MessageID)
		}
	}
	if len(possibly) != 1 || possibly[0] != "unknown" || len(r.Confirmed) != 1 {
		t.Fatalf("possibly published %v, confirmed %v: want only the unknown one possibly published, and the confirmed one", possibly, r.Confirmed)
	}
}

// Two dead letters alike in every recorded way (one name): the run
// recorded both publishing, confirmed one copy, whose source's ack took
// effect, and was killed before the other's copy. The one message of
// that name left in the DLQ is the unconfirmed source, never moved: the
// resume replays it rather than removing it as a twin.
func TestAResumeRemovesNoMessageOfANameWhoseUnconfirmedSourceIsLeft(t *testing.T) {
	at := time.Date(2026, 12, 8, 0, 39, 51, 0, time.UTC)
	d := domain.DeadLetter{MessageID: "d-51", LogicalID: "d-51", Body: []byte("same"),
		Deaths: []domain.Death{{Queue: "dup", Reason: "rejected", Count: 1, Time: at}}}
	tw := TwinOf(d)
	named := func(outcome string) audit.Record {
		return audit.Record{Operation: "op-1", Vhost: "/", Queue: "dup.dlq", Action: ActionReplay, Outcome: outcome,
			MessageIDs: []string{tw.MessageID}, LogicalIDs: []string{tw.LogicalID},
			Detail: map[string]string{"body_sha256": `["` + tw.BodySHA256 + `"]`, "x_death_sha256": `["` + tw.Death + `"]`}}
	}
	records := []audit.Record{{Operation: "op-1", Vhost: "/", Queue: "dup.dlq", Action: ActionReplay, Outcome: domain.OutcomeIntent,
		Detail: map[string]string{"streamed": "true"}},
		named(domain.OutcomePublishing), named(domain.OutcomePublishing), named(domain.OutcomeConfirmed)}
	r, err := ReadResumption(records, "/", "dup.dlq", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.match(TwinOf(d)); got != maybePublished {
		t.Fatalf("the first message of the name = %d; want maybePublished (%d): the unconfirmed source is still in the DLQ", got, maybePublished)
	}
	// Had the confirmed source's ack been lost, it would be back too:
	// the second message of the name is its twin.
	if got := r.match(TwinOf(d)); got != twinOfConfirmed {
		t.Fatalf("the second message of the name = %d; want twinOfConfirmed (%d)", got, twinOfConfirmed)
	}
	if got := r.match(TwinOf(d)); got != notRecorded {
		t.Fatalf("a third message of the name = %d; want notRecorded (%d)", got, notRecorded)
	}
}

// An export is an operation of one record that moved nothing: a resume
// of it says so, and a resume of the queue's latest incomplete operation
// passes it by.
func TestAnExportIsNothingToResume(t *testing.T) {
	at := time.Date(2026, 12, 3, 2, 50, 0, 0, time.UTC)
	export := audit.Op{ID: "op-x", Action: "export", Vhost: "/", Queue: "orders.dlq", Target: "/srv/orders.jsonl"}.
		Final(map[string]int{domain.OutcomeExported: 3, "selected": 3})
	export.Time, export.Seq = at, 1
	records := []audit.Record{export}
	_, err := ReadResumption(records, "/", "orders.dlq", "op-x")
	if !errors.Is(err, ErrNothingToResume) || !strings.Contains(err.Error(), "operation op-x (export, 2026-12-03T02:50:00Z) moved no message") {
		t.Errorf("resuming an export: %v", err)
	}
	if _, err := ReadResumption(records, "/", "orders.dlq", ""); !errors.Is(err, ErrNothingToResume) {
		t.Errorf("resuming the latest incomplete operation beside an export: %v", err)
	}
}
