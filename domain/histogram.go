package domain

// Histogram counts dead letters by attempts, reason and origin queue
// (docs/ARCHITECTURE.md §4.1), with the same bounds as a scan.
type Histogram struct {
	Attempts map[int]int
	Reasons  map[string]int
	Origins  map[string]int
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{Attempts: map[int]int{}, Reasons: map[string]int{}, Origins: map[string]int{}}
}

// Add counts one dead letter.
func (h *Histogram) Add(d DeadLetter) {
	h.Attempts[min(d.Attempts, MaxAttemptsKey)]++
	Bump(h.Reasons, d.Reason)
	Bump(h.Origins, d.Origin())
}
