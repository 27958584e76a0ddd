//go:build faults

// Package faults replays dead-letter queues with the built warren binary
// while faults strike — the process killed, the broker restarted, its
// connections closed, the destination unbound or full, PostgreSQL stopped,
// the audit file made unwritable — and then counts every logical ID across
// the DLQ, the destination and the parking queue. It stops and restarts
// shared services, so it builds only with the faults tag and runs alone
// (make test-faults).
package faults

import (
	"fmt"
	"os"
	"testing"
	"text/tabwriter"
)

// row is one fault's line of the summary table.
type row struct {
	broker, fault                       string
	runs, messages, lost, dup, unknowns int
	resumed                             int // runs a dlq resume finished
	maxDup                              int // most duplicates of one run
}

// table collects the rows as the tests run; they run one after another.
var table []*row

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "warren-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	warrenBin, err = buildWarren(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	printTable()
	os.RemoveAll(dir)
	os.Exit(code)
}

func printTable() {
	if len(table) == 0 {
		return
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "broker\tfault\truns\tresumed\tmessages\tlost\tduplicated\tmost in a run\tunknown\t")
	for _, r := range table {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r.broker, r.fault, r.runs, r.resumed, r.messages, r.lost, r.dup, r.maxDup, r.unknowns)
	}
	tw.Flush()
	fmt.Println("counted after `dlq resume` finished what each fault left open; lost must be 0;")
	fmt.Println("a duplicated ID must be one the audit log leaves unknown, at most a confirm window (2048) a run.")
}
