package cli

import (
	"os"
	"runtime/debug"
)

// The garbage collector's settings for bulk work (docs/ARCHITECTURE.md
// §4.4). GOGC or GOMEMLIMIT set in the environment win.

// bulkMemory tunes the collector for a streamed operation, whose heap
// holds at most a window of messages: it runs when the heap has grown
// fivefold or reaches bulkHeap, instead of at every doubling, which cost
// a fifth of the process's CPU on a two-core machine. It returns what
// puts the defaults back.
func bulkMemory() (restore func()) {
	if envTunesGC() {
		return func() {}
	}
	limit := debug.SetMemoryLimit(bulkHeap)
	percent := debug.SetGCPercent(400)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// bulkHeap is the heap at which a streamed operation's collector runs
// whatever the growth: well below the 150 MiB the operation may use.
const bulkHeap = 96 << 20

// envTunesGC says the operator set the collector up in the environment.
func envTunesGC() bool {
	return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
}
