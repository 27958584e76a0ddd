package cli

import (
	"fmt"
	"sync"
	"time"

	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// progressPrinter writes an operation's progress to stderr: one line
// rewritten in place on a terminal, a plain line every few seconds
// otherwise, so a log shows the run without a flood.
func (a *App) progressPrinter(action string) func(ops.Progress) {
	tty := IsTerminal(a.Err)
	var (
		mu    sync.Mutex
		start time.Time
		last  time.Time
	)
	return func(p ops.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if start.IsZero() {
			start = p.At
		}
		if !tty && !p.Finished && p.At.Sub(last) < 5*time.Second {
			return
		}
		last = p.At
		line := progressLine(action, p, p.At.Sub(start))
		if tty {
			fmt.Fprint(a.Err, "\r"+line+"\033[K")
			if p.Finished {
				fmt.Fprintln(a.Err)
			}
			return
		}
		fmt.Fprintln(a.Err, line)
	}
}

// progressLine is "replay: 12000 of 200000 settled (11 998 confirmed) ·
// 8.1k msg/s · ETA 23s"; for a run no preview counted, whose total is
// what it reads, "replay: read 9000 of 200000 · 12 settled (12
// confirmed) · …", the rate and ETA those of the reading.
func progressLine(action string, p ops.Progress, took time.Duration) string {
	s := fmt.Sprintf("%s: %d", action, p.Done)
	done := p.Done
	if p.OfRead {
		s = fmt.Sprintf("%s: read %d", action, p.Read)
		if p.Total > 0 {
			s += fmt.Sprintf(" of %d", p.Total)
		}
		s += fmt.Sprintf(" · %d", p.Done)
		done = p.Read
	} else if p.Total > 0 {
		s += fmt.Sprintf(" of %d", p.Total)
	}
	s += fmt.Sprintf(" settled (%d confirmed", p.Confirmed)
	if n := p.Returned + p.Nacked + p.Unknown; n > 0 {
		s += fmt.Sprintf(", %d returned, %d nacked, %d unknown", p.Returned, p.Nacked, p.Unknown)
	}
	s += ")"
	if st := p.StageText(); st != "" {
		s += fmt.Sprintf(" · %s · %d applied, %d failed again", st, p.Applied, p.FailedAgain)
	}
	if p.PaceWhy != "" {
		s += " · " + p.PaceWhy
	}
	if b := p.BlockedText(); b != "" {
		s += " · " + sanitize.Text(b)
	}
	if took > 0 && done > 0 {
		perSec := float64(done) / took.Seconds()
		switch {
		case p.OfRead:
			s += " · " + format.Rate(perSec) + " read/s"
		case p.Pace > 0:
			perSec = p.Pace // the ETA follows the pace
		default:
			s += " · " + format.Rate(perSec) + " msg/s"
		}
		if left := p.Total - done; left > 0 && !p.Finished {
			s += " · ETA " + format.Duration(time.Duration(float64(left)/perSec*float64(time.Second)))
		}
	}
	return s
}
