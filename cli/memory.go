package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The garbage collector's settings per use (docs/ARCHITECTURE.md §9 and
// §3.4). GOGC or GOMEMLIMIT set in the environment win over them.

// bulkMemory tunes the collector for a walk, whose heap
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

// readMemory holds a browse that reads large bodies to what it keeps: a
// page asks for no more bodies than the byte budget (dlq.Options.ByteBudget), a
// listing keeps none once read, and the collector gives the bodies read
// back before the heap passes readHeap, instead of letting the garbage
// of one page double the heap first. It returns what puts the default
// back.
// A listing of many letters that holds more than readHeap live has the
// limit follow it (a quarter above what is live, read every quarter
// second), so the collector never runs without end under a limit below
// what the process holds.
func readMemory() (restore func()) {
	if envTunesGC() {
		return func() {}
	}
	return followHeap(readHeap, 250*time.Millisecond)
}

// readHeap is the heap at which a browse's collector runs whatever the
// growth: the default byte budget and what the process holds besides.
const readHeap = 80 << 20

// bulkHeap is the heap at which a walk's collector runs
// whatever the growth: well below the 150 MiB the operation may use.
const bulkHeap = 96 << 20

// dashboardMemory keeps the dashboard's heap within a quarter again what
// is live once that is large. At 100 000 queues the model holds about
// 125 MiB; collecting at every doubling let the process reach 276 MiB,
// at 1.5 × what is live 211 MiB, at 1.25 × 193 MiB, for about 5 % of a
// core while every vhost is listed back to back and less otherwise (the
// heap grows by a vhost's list at a time, docs/ARCHITECTURE.md §3.4).
// Every two seconds the soft limit is set to 1.25 × the heap found live
// by the last collection, and never below dashboardFloor, so a small
// dashboard collects as Go's default does and a large one never runs
// into a limit below what it holds. It returns what stops the tuning and
// puts the default back.
//
// A collection during the first list of every queue finds the list and
// the rows built from it both live (161 MB at 100 000 queues), a peak
// that lasts one snapshot; a limit taken from it let the heap grow to
// 1.25 × that peak before the next collection. So when a collection
// finds far more live than the one before (heapFollower), the next tick
// collects once more, after the peak, and the limit follows what stayed.
func dashboardMemory() (stop func()) {
	if envTunesGC() {
		return func() {}
	}
	return followHeap(dashboardFloor, 2*time.Second)
}

// followHeap sets the soft limit to floor, then every tick to a quarter
// above the heap found live (never below floor), collecting once more
// after a jump; stop puts the default back.
func followHeap(floor int64, tick time.Duration) (stop func()) {
	prev := debug.SetMemoryLimit(floor)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		f := heapFollower{floor: floor}
		collect := false
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if collect {
					runtime.GC()
				}
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 {
					var limit int64
					limit, collect = f.observe(sample[0].Value.Uint64())
					debug.SetMemoryLimit(limit)
				}
			}
		}
	}()
	return func() {
		close(done)
		debug.SetMemoryLimit(prev)
	}
}

// heapFollower turns the live heap read at each tick into the soft limit,
// and says when a collection should come at the next tick: after a jump
// of more than a quarter in what is live (and above the floor, where the
// limit starts to matter), which is most often a list being decoded
// beside the rows it replaces.
type heapFollower struct {
	floor int64
	last  uint64
}

func (f *heapFollower) observe(live uint64) (limit int64, collectNext bool) {
	limit = followLimit(f.floor, live)
	jumped := f.last > 0 && live > f.last+f.last/4 && limit > f.floor
	f.last = live
	return limit, jumped
}

// dashboardFloor is the least soft limit the dashboard sets.
const dashboardFloor = 128 << 20

// followLimit is the soft limit for a heap of live bytes: a quarter
// above it, never below floor.
func followLimit(floor int64, live uint64) int64 {
	return max(floor, int64(live+live/4))
}

// envTunesGC says the operator set the collector up in the environment.
func envTunesGC() bool {
	return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
}
