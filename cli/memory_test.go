package cli

import "testing"

func TestTheDashboardsSoftLimitStaysAboveWhatIsLive(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int64
	}{
		{0, dashboardFloor},
		{20 << 20, dashboardFloor}, // a small dashboard collects as Go's default does
		{110 << 20, 165 << 20},     // 100 000 queues: half again what is live
		{400 << 20, 600 << 20},     // never a limit below the heap it holds
	} {
		if got := dashboardLimit(tt.live); got != tt.want {
			t.Errorf("dashboardLimit(%d MiB) = %d MiB, want %d MiB", tt.live>>20, got>>20, tt.want>>20)
		}
	}
}
