package domain

import "testing"

// The management API's figures can be seconds old: only what they still
// explain is taken for messages another client holds.
func TestHeldElsewhereCountsOnlyWhatIsNotReadyNow(t *testing.T) {
	for _, tt := range []struct {
		name  string
		q     QueueInfo
		ready int
		want  int
	}{
		{"a browse holds them all", QueueInfo{Messages: 29, Unacked: 29}, 0, 29},
		{"a consumer holds two of five", QueueInfo{Messages: 5, Unacked: 2}, 3, 2},
		{"given back since the figures", QueueInfo{Messages: 100000, Unacked: 100000}, 100000, 0},
		{"some given back since", QueueInfo{Messages: 100, Unacked: 100}, 60, 40},
		{"more ready than counted", QueueInfo{Messages: 5, Unacked: 2}, 9, 0},
		{"nothing unacknowledged", QueueInfo{Messages: 7}, 0, 0},
		{"a stream", QueueInfo{Type: TypeStream, Messages: 10, Unacked: 10}, 0, 0},
	} {
		if got := HeldElsewhere(tt.q, tt.ready); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestHeldNoteCountsInWords(t *testing.T) {
	if got := HeldNote(1); got[:14] != "1 message is h" {
		t.Errorf("HeldNote(1) = %q", got)
	}
	if got := HeldNote(29); got[:17] != "29 messages are h" {
		t.Errorf("HeldNote(29) = %q", got)
	}
}
