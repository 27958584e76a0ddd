// Package nodes keeps the addresses of one cluster's nodes, the one the
// config names first and its fallbacks, and remembers which answered
// last, so that a node down costs one failed attempt, not one for every
// request that follows (docs/ARCHITECTURE.md §6).
package nodes

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Set is a cluster's addresses for one protocol (AMQP, or the management
// API). Safe for concurrent use.
type Set struct {
	urls  []string
	retry time.Duration // RetryFirst; shorter in tests

	mu   sync.Mutex
	last int // the index of the node that answered last
	// missed is why the first node did not answer, and when it was
	// tried, while another one serves.
	missed   error
	missedAt time.Time
}

// New returns the set of first, then more, in that order.
func New(first string, more []string) *Set {
	return &Set{urls: append([]string{first}, more...), retry: RetryFirst}
}

// RetryFirst is how long a fallback serves before the node the config
// names first is tried again, first, by one request.
const RetryFirst = time.Minute

// order is the nodes in the order to try them: the one that answered
// last, then the others in the config's order; the first node first
// again, for one caller, once a fallback has served RetryFirst since
// the first was last tried.
func (s *Set) order() []int {
	s.mu.Lock()
	last := s.last
	if last != 0 && time.Since(s.missedAt) >= s.retry {
		last, s.missedAt = 0, time.Now()
	}
	s.mu.Unlock()
	out := make([]int, 0, len(s.urls))
	out = append(out, last)
	for i := range s.urls {
		if i != last {
			out = append(out, i)
		}
	}
	return out
}

// Serving is the node that answered last and, when it is not the first
// the config names, why the first did not answer when it was last tried,
// and when.
type Serving struct {
	URL      string
	Fallback bool
	Missed   error
	MissedAt time.Time
}

// Serving says which node answered last.
func (s *Set) Serving() Serving {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Serving{URL: s.urls[s.last], Fallback: s.last != 0, Missed: s.missed, MissedAt: s.missedAt}
}

// Try calls attempt with each node's address in turn, the one that
// answered last first, until one answers, and returns what it returned.
// Only an error down counts as the node not answering: any other (bad
// credentials, a missing queue, a cancelled context) is returned at
// once, since another node of the same cluster would answer the same.
// When no node answers, the error is each node's, in the order tried
// (AllDown), or the one node's.
func Try[T any](s *Set, down func(error) bool, attempt func(url string) (T, error)) (T, error) {
	var (
		zero  T
		first error // node 0's
		errs  []error
	)
	for _, i := range s.order() {
		v, err := attempt(s.urls[i])
		if err == nil {
			s.mu.Lock()
			s.last = i
			if i == 0 {
				s.missed, s.missedAt = nil, time.Time{}
			} else if first != nil {
				s.missed, s.missedAt = first, time.Now()
			}
			s.mu.Unlock()
			return v, nil
		}
		if !down(err) {
			return zero, err
		}
		if i == 0 {
			first = err
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return zero, errs[0]
	}
	return zero, &AllDown{Errs: errs}
}

// AllDown is the error of a cluster none of whose nodes answered: each
// node's error, in the order they were tried.
type AllDown struct{ Errs []error }

func (e *AllDown) Error() string {
	parts := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		parts[i] = err.Error()
	}
	return fmt.Sprintf("no node of the cluster answered (%d tried): %s", len(e.Errs), strings.Join(parts, "; "))
}

// Unwrap gives the error of the node tried first to errors.Is and errors.As.
func (e *AllDown) Unwrap() error { return e.Errs[0] }
