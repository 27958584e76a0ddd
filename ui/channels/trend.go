package channels

import (
	"time"

	"github.com/warrenops/warren/domain"
)

// A channel is marked when its unconfirmed publishes keep growing: over
// the last trendWindow its figure rose at least minRises times (the
// broker recomputes it once per statistics interval, so that is several
// intervals, not two samples), ends above where the window starts, and
// is at its highest now. A publisher whose pending confirms level off
// keeps the mark until the rises have left the window; one whose count
// falls loses it at once.
const (
	trendWindow = time.Minute
	minRises    = 3
)

type sample struct {
	at time.Time
	n  int64
}

// history keeps each confirm-mode channel's recent unconfirmed counts.
type history map[string][]sample

// record adds the list's figures taken at now, forgets samples older
// than the window and channels that are gone.
func (h history) record(chs []domain.ChannelStat, now time.Time) {
	seen := make(map[string]bool, len(chs))
	for _, c := range chs {
		if c.Confirm == nil || !*c.Confirm || c.Unconfirmed == nil {
			continue
		}
		seen[c.Name] = true
		s := append(h[c.Name], sample{at: now, n: *c.Unconfirmed})
		for len(s) > 0 && now.Sub(s[0].at) > trendWindow {
			s = s[1:]
		}
		h[c.Name] = s
	}
	for name := range h {
		if !seen[name] {
			delete(h, name)
		}
	}
}

// growing reports whether the channel's unconfirmed count keeps growing.
func (h history) growing(name string) bool {
	s := h[name]
	if len(s) <= minRises {
		return false
	}
	rises := 0
	last := s[len(s)-1].n
	for i := 1; i < len(s); i++ {
		if s[i].n > s[i-1].n {
			rises++
		}
		if s[i-1].n > last {
			return false
		}
	}
	return rises >= minRises && last > s[0].n
}
