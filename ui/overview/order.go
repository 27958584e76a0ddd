package overview

import (
	"cmp"
	"slices"
	"strings"
)

// sortedOrder returns every row's index in the order by; ties break on
// vhost and name so the order is stable between snapshots. A snapshot
// comes sorted by vhost and name (the API's order), and then the index
// itself breaks ties, without comparing strings.
func sortedOrder(rows []row, by SortBy) []int {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	byName := true
	for i := 1; i < len(rows) && byName; i++ {
		byName = compareRef(&rows[i-1], &rows[i]) < 0
	}
	tie := func(a, b int) int {
		if byName {
			return cmp.Compare(a, b)
		}
		return compareRef(&rows[a], &rows[b])
	}
	slices.SortFunc(idx, func(a, b int) int {
		x, y := &rows[a], &rows[b]
		var c int
		switch by {
		case ByDepth:
			c = cmp.Compare(y.q.Messages, x.q.Messages)
		case ByAge:
			c = compareAge(x, y)
		case ByDLQ:
			c = cmp.Compare(y.dlqDepth, x.dlqDepth)
		}
		if c != 0 {
			return c
		}
		return tie(a, b)
	})
	return idx
}

func compareRef(x, y *row) int {
	return cmp.Or(cmp.Compare(x.q.Vhost, y.q.Vhost), cmp.Compare(x.q.Name, y.q.Name))
}

// filtered keeps, in order, the rows whose vhost/name contains filter
// (case-insensitive): one pass, no sort, so a keystroke costs a scan of
// the names however many queues there are. An empty filter keeps order
// itself.
func filtered(rows []row, order []int, filter string) []int {
	if filter == "" {
		return order
	}
	filter = strings.ToLower(filter)
	out := make([]int, 0, len(order)/4)
	for _, i := range order {
		if strings.Contains(rows[i].trend.search, filter) {
			out = append(out, i)
		}
	}
	return out
}
