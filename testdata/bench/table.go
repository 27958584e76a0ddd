package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the results table.
type row struct {
	figure  string
	warren  string
	anchor  string
	ratio   string
	target  string
	verdict string // pass, miss, or "" for a figure without a target
}

// cmp is a target's comparison.
type cmp struct {
	op    string // "<=", "<" or ">="
	bound float64
}

func (c cmp) holds(v float64) bool {
	switch c.op {
	case "<=":
		return v <= c.bound
	case "<":
		return v < c.bound
	case ">=":
		return v >= c.bound
	}
	return false
}

func verdict(ok bool) string {
	if ok {
		return "pass"
	}
	return "miss"
}

// versus is a figure beside its anchor; the target bounds warren ÷ anchor.
func versus(figure string, w, a float64, format func(float64) string, target *cmp) row {
	r := row{figure: figure, warren: format(w), anchor: format(a), ratio: "—", target: "—"}
	if a > 0 {
		ratio := w / a
		r.ratio = fmt.Sprintf("%.2f×", ratio)
		if target != nil {
			r.target = fmt.Sprintf("%s %.2f×", target.op, target.bound)
			r.verdict = verdict(target.holds(ratio))
		}
	}
	return r
}

// absolute is a figure with a target of its own; anchor is context only.
func absolute(figure string, w float64, format func(float64) string, anchor string, target cmp) row {
	if anchor == "" {
		anchor = "—"
	}
	return row{figure: figure, warren: format(w), anchor: anchor, ratio: "—",
		target: target.op + " " + format(target.bound), verdict: verdict(target.holds(w))}
}

// info is a figure reported for the record, without a target.
func info(figure, w, anchor string) row {
	if anchor == "" {
		anchor = "—"
	}
	return row{figure: figure, warren: w, anchor: anchor, ratio: "—", target: "—"}
}

func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\twarren\tanchor\tratio\ttarget\tresult")
	fmt.Fprintln(tw, "------\t------\t------\t-----\t------\t------")
	pass, miss := 0, 0
	for _, r := range rows {
		v := r.verdict
		switch v {
		case "pass":
			pass++
		case "miss":
			miss++
		default:
			v = "—"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.figure, r.warren, r.anchor, r.ratio, r.target, v)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d targets met, %d missed\n", pass, miss)
}

// Formats for the table.

func fmtMs(ms float64) string {
	switch {
	case ms >= 10000:
		return fmt.Sprintf("%.1f s", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.0f µs", ms*1000)
}

func fmtMicros(us float64) string { return fmt.Sprintf("%.0f µs", us) }

func fmtRate(perSec float64) string {
	if perSec >= 10000 {
		return fmt.Sprintf("%.1fk msg/s", perSec/1000)
	}
	return fmt.Sprintf("%.0f msg/s", perSec)
}

func fmtBytes(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}

func fmtMiB(n float64) string { return fmt.Sprintf("%.0f MiB", n) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return math.Inf(1)
	}
	return float64(n) / d.Seconds()
}

// thousands writes n as 10 000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}
