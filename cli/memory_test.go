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
