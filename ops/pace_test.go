package ops

import (
	"strings"
	"testing"
)

func TestNextPaceGrowsOnlyWhileTheConsumersKeepUpAndThePaceIsUsed(t *testing.T) {
	tests := []struct {
		name          string
		r, took, sent float64
		backlog       int
		want          float64
	}{
		{"keeping up at the pace: half again", 100, 100, 100, 0, 150},
		{"keeping up, and they took more than that", 100, 180, 100, 0, 180},
		{"the run waited (a verdict): nothing learnt, pace held", 100, 0, 0, 0, 100},
		{"a backlog: what they take, less what drains it in 2 s", 300, 200, 300, 120, 140},
		{"never below the floor", 50, 0, 50, 400, PaceFloor},
		{"never above the ceiling", PaceCeiling, PaceCeiling, PaceCeiling, 0, PaceCeiling},
	}
	for _, tt := range tests {
		if got := nextPace(tt.r, tt.took, tt.sent, tt.backlog); got != tt.want {
			t.Errorf("%s: nextPace(%g, took %g, sent %g, backlog %d) = %g, want %g", tt.name, tt.r, tt.took, tt.sent, tt.backlog, got, tt.want)
		}
	}
}

func TestPaceStatusSaysWhy(t *testing.T) {
	s := PaceStatus{Rate: 140, Took: 141, Ack: 180, Arrivals: 40, Depth: 12, Start: 0}
	if got := s.Why(); got != "pace 140/s: consumers take 141/s net (API: ack 180/s, arrivals 40/s) · depth 12, 0 at the start" {
		t.Errorf("Why() = %q", got)
	}
	s.Ack = -1
	if got := s.Why(); strings.Contains(got, "API") {
		t.Errorf("before the management API answers: %q", got)
	}
}
