package cli

import (
	"runtime/debug"
	"testing"
)

func TestAStreamedOperationsCollectorSettingsAreTakenBackAfterIt(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := bulkMemory()
	during, limit := debug.SetGCPercent(400), debug.SetMemoryLimit(bulkHeap)
	restore()
	after := debug.SetGCPercent(100)
	if during != 400 || limit != bulkHeap {
		t.Fatalf("during the operation: GOGC %d and a limit of %d bytes, want 400 and %d", during, limit, bulkHeap)
	}
	if after != 100 || debug.SetMemoryLimit(-1) == bulkHeap {
		t.Fatalf("after it: GOGC %d, the limit left at %d bytes", after, debug.SetMemoryLimit(-1))
	}

	t.Setenv("GOGC", "150")
	bulkMemory()()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set by the operator the setting became %d", got)
	}
}

func TestTheDashboardsSoftLimitStaysAboveWhatIsLive(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int64
	}{
		{0, dashboardFloor},
		{20 << 20, dashboardFloor}, // a small dashboard collects as Go's default does
		{120 << 20, 150 << 20},     // 100 000 queues: a quarter again what is live
		{400 << 20, 500 << 20},     // never a limit below the heap it holds
	} {
		if got := followLimit(dashboardFloor, tt.live); got != tt.want {
			t.Errorf("followLimit(dashboard, %d MiB) = %d MiB, want %d MiB", tt.live>>20, got>>20, tt.want>>20)
		}
	}
}

func TestTheDashboardCollectsOnceMoreAfterAPeakInWhatIsLive(t *testing.T) {
	f := heapFollower{floor: dashboardFloor}
	steps := []struct {
		live        uint64
		wantLimit   int64
		wantCollect bool
	}{
		{5 << 20, dashboardFloor, false},  // the first page
		{40 << 20, dashboardFloor, false}, // a jump, but under the floor the limit does not matter
		{160 << 20, 200 << 20, true},      // the first list beside its rows: collect again
		{160 << 20, 200 << 20, false},     // no collection in between: the same reading, no new jump
		{124 << 20, 155 << 20, false},     // after the peak: the limit follows what stayed
		{132 << 20, 165 << 20, false},     // a vhost's list, a small rise
		{400 << 20, 500 << 20, true},      // a broker that grew: once more
	}
	for i, s := range steps {
		limit, collect := f.observe(s.live)
		if limit != s.wantLimit || collect != s.wantCollect {
			t.Errorf("step %d (%d MiB live): limit %d MiB, collect %v; want %d MiB, %v",
				i, s.live>>20, limit>>20, collect, s.wantLimit>>20, s.wantCollect)
		}
	}
}
