// Package sparkline draws a series as one line of block characters and
// keeps the bounded history a series is drawn from.
package sparkline

import "strings"

var levels = []rune("▁▂▃▄▅▆▇█")

// Number is what a sparkline can draw.
type Number interface{ ~int64 | ~float64 }

// Render draws the last width values, oldest on the left, right-aligned
// so the newest sample is always in the same place. Bars scale from zero
// to the largest value, so a flat line at the top means a steady non-zero
// figure, not an empty one.
func Render[T Number](values []T, width int) string {
	if width <= 0 {
		return ""
	}
	if len(values) > width {
		values = values[len(values)-width:]
	}
	var peak T
	for _, v := range values {
		peak = max(peak, v)
	}
	var b strings.Builder
	b.Grow(width * 3)
	b.WriteString(strings.Repeat(" ", width-len(values)))
	top := len(levels) - 1
	for _, v := range values {
		i := 0
		if peak > 0 && v > 0 {
			i = int(float64(v) / float64(peak) * float64(top))
			// A non-zero value never looks like zero.
			i = max(i, 1)
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}

// History is a fixed-size ring of the most recent samples. While every
// sample is the same (an idle queue's depth) it keeps that one value and
// a count, and allocates its ring at the first different one: on a broker
// of 100 000 mostly idle queues the rings were a fifth of the dashboard's
// memory.
type History[T Number] struct {
	buf  []T // nil while every sample equals flat
	flat T
	size int
	next int
	n    int
}

// NewHistory returns a history that keeps the last size samples.
func NewHistory[T Number](size int) *History[T] {
	return &History[T]{size: max(size, 1)}
}

// Push records a sample, dropping the oldest when full.
func (h *History[T]) Push(v T) {
	if h.buf == nil {
		if h.n == 0 || v == h.flat {
			h.flat, h.n = v, min(h.n+1, h.size)
			return
		}
		h.buf = make([]T, h.size)
		for i := range h.n {
			h.buf[i] = h.flat
		}
		h.next = h.n % h.size
	}
	h.buf[h.next] = v
	h.next = (h.next + 1) % len(h.buf)
	h.n = min(h.n+1, len(h.buf))
}

// Len is the number of samples kept.
func (h *History[T]) Len() int { return h.n }

// Values returns the samples, oldest first.
func (h *History[T]) Values() []T {
	out := make([]T, 0, h.n)
	if h.buf == nil {
		for range h.n {
			out = append(out, h.flat)
		}
		return out
	}
	start := (h.next - h.n + len(h.buf)) % len(h.buf)
	for i := range h.n {
		out = append(out, h.buf[(start+i)%len(h.buf)])
	}
	return out
}

// Last returns the n-th most recent sample (0 = newest).
func (h *History[T]) Last(n int) (T, bool) {
	if n < 0 || n >= h.n {
		var zero T
		return zero, false
	}
	if h.buf == nil {
		return h.flat, true
	}
	return h.buf[(h.next-1-n+2*len(h.buf))%len(h.buf)], true
}
