package actions

import (
	"fmt"
	"strings"
	"testing"
)

func TestTheQuestionCountsLogicalIDsOnlyWhenSomeAreShared(t *testing.T) {
	for _, tt := range []struct {
		n, ids int
		want   string
	}{
		{25, 24, "25 messages, 24 logical IDs: 1 duplicated"},
		{3, 1, "3 messages, 1 logical ID: 2 duplicated"},
		{25, 25, "25 messages"},
		{1, 1, "1 message"},
		{25, 0, "25 messages"}, // not counted
	} {
		if got := MessagesAndIDs(tt.n, tt.ids); got != tt.want {
			t.Errorf("MessagesAndIDs(%d, %d) = %q, want %q", tt.n, tt.ids, got, tt.want)
		}
	}
}

func TestTheIDSetCountsDistinctIDsUpToItsBound(t *testing.T) {
	s := newIDSet()
	for _, id := range []string{"a", "b", "a", "c", "b"} {
		s.add(id)
	}
	if got := s.count(); got != 3 {
		t.Fatalf("count = %d, want 3", got)
	}
	s = newIDSet()
	for i := range maxCountedIDs {
		s.add(fmt.Sprint(i))
	}
	s.add("0") // seen already: still counted
	if got := s.count(); got != maxCountedIDs {
		t.Fatalf("count = %d at the bound, want %d", got, maxCountedIDs)
	}
	s.add("one more")
	if got := s.count(); got != 0 {
		t.Errorf("count past the bound = %d, want 0 (not counted)", got)
	}
}

func TestAWalkAskingNoOneSaysWhyWhatItReadStayed(t *testing.T) {
	var r Result
	r.kept.Request = Request{Action: ActionReplay, Queue: "orders.dlq"}
	if got := r.StayNotes(); len(got) != 0 {
		t.Fatalf("nothing kept: notes %q, want none", got)
	}
	r.kept.count(SkipNoDestination, nil)
	r.kept.count(SkipNoDestination, nil)
	r.kept.count(SkipFiltered, nil)
	r.kept.count(SkipQuarantined, nil)
	r.kept.count(SkipFilterError, fmt.Errorf("headers.n: not a number"))
	want := []string{
		"1 not matching the filter stay",
		"1 quarantined left out (replay from the parking queue to release them)",
		"1 the filter could not judge stay (headers.n: not a number)",
		"2 without an origin queue stay (use --to)",
	}
	got := r.StayNotes()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("notes\n got %q\nwant %q", got, want)
	}
	r.diedAgain = 2
	if got := r.StayNotes(); got[len(got)-1] != "2 copies of this run died again and stay (a run replays a message once)" {
		t.Errorf("copies of the run read back: notes %q", got)
	}
	r.kept.Request.To = &Override{Exchange: "orders", KeepKey: true}
	if got := r.StayNotes(); !strings.Contains(strings.Join(got, "; "), "2 without an original routing key stay") {
		t.Errorf("--to EXCHANGE: notes %q, want the missing routing key named", got)
	}
}
