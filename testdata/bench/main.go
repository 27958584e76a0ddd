// Command bench measures warren's performance figures on the local broker
// and database, each beside an anchor measured in the same run: the plain
// management call, the raw consumer, the shovel, the plain confirm
// pipeline. It prints one table and exits 0 even when a target is missed;
// it exits 1 only when a workload could not be set up or measured.
//
// It lives under testdata so that `go test ./...` and `go vet ./...` leave
// it alone; run it with `go run ./testdata/bench` (see docs/BENCHMARKS.md).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sizes are the workloads' scales.
type sizes struct {
	overview []int // queues
	scan     []int // dead letters
	replay   []int // dead letters
	inbox    int   // rows
	export   int   // dead letters exported and imported
	filtered int   // dead letters a filtered replay moves, of twice as many
}

var (
	fullSizes  = sizes{overview: []int{1000, 10000}, scan: []int{10000, 100000}, replay: []int{10000, 50000}, inbox: 1000000, export: 100000, filtered: 40000}
	quickSizes = sizes{overview: []int{200, 1000}, scan: []int{2000, 10000}, replay: []int{2000, 5000}, inbox: 100000, export: 10000, filtered: 5000}
)

func main() {
	var cfg config
	quick := flag.Bool("quick", false, "small sizes, for trying the harness out")
	only := flag.String("only", "", "comma-separated workloads to run: overview,scan,replay,filtered,returns,bodies,inbox,canary,export (default all)")
	flag.StringVar(&cfg.warren, "warren", "", "warren binary to measure (default: build one from this module)")
	flag.StringVar(&cfg.amqpAddr, "amqp", "127.0.0.1:5672", "broker AMQP address")
	flag.StringVar(&cfg.mgmtURL, "mgmt", "http://127.0.0.1:15672", "management API URL")
	flag.StringVar(&cfg.metricsURL, "metrics", "", "the broker's Prometheus endpoint, for the dashboard's metrics_url (default: warren's, port 15692 beside a management API on 15672)")
	flag.StringVar(&cfg.user, "user", "guest", "broker user (needs the administrator tag for vhosts and shovels)")
	flag.StringVar(&cfg.password, "password", "guest", "broker password")
	flag.BoolVar(&cfg.keep, "keep", false, "leave the workloads' vhosts on the broker, and their files on disk, for inspection")
	flag.StringVar(&cfg.pgDSN, "pg", "postgres://postgres@127.0.0.1:5432/test", "PostgreSQL database for the inbox table")
	overview := flag.String("queues", "", "overview sizes, e.g. 1000,10000 (default per -quick)")
	reuse := flag.String("reuse-vhosts", "", "comma-separated vhosts left by an earlier run (-keep) to measure the overview on, as they are, instead of declaring queues")
	flag.IntVar(&cfg.vhosts, "vhosts", 1, "spread each overview size over this many vhosts; above 1 the dashboard shows every vhost")
	scan := flag.String("scan", "", "scan sizes in dead letters (default per -quick)")
	replay := flag.String("replay", "", "replay sizes in dead letters (default per -quick)")
	inboxRows := flag.Int("inbox-rows", 0, "rows of the inbox table (default per -quick)")
	flag.Parse()

	sz := fullSizes
	if *quick {
		sz = quickSizes
	}
	for _, o := range []struct {
		flag string
		into *[]int
	}{{*overview, &sz.overview}, {*scan, &sz.scan}, {*replay, &sz.replay}} {
		if o.flag == "" {
			continue
		}
		got, err := intList(o.flag)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		*o.into = got
	}
	for _, v := range strings.Split(*reuse, ",") {
		if v = strings.TrimSpace(v); v != "" {
			cfg.reuse = append(cfg.reuse, v)
		}
	}
	if len(cfg.reuse) > 0 {
		sz.overview = sz.overview[:1] // one measurement of what is there
	}
	if *inboxRows > 0 {
		sz.inbox = *inboxRows
	}
	want := map[string]bool{}
	for _, w := range strings.Split(*only, ",") {
		if w = strings.TrimSpace(w); w != "" {
			want[w] = true
		}
	}
	run := func(name string) bool { return len(want) == 0 || want[name] }

	b, err := newBench(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	defer b.close()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-stop
		fmt.Fprintln(os.Stderr, "bench: interrupted; removing the workloads' vhosts")
		b.interrupted()
		os.Exit(1)
	}()
	started := time.Now()
	var rows []row
	failed := false
	step := func(name string, fn func() ([]row, error)) {
		if !run(name) {
			return
		}
		b.logf("== %s", name)
		got, err := fn()
		rows = append(rows, got...)
		if err != nil {
			failed = true
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name, err)
		}
	}
	for _, n := range sz.overview {
		step("overview", func() ([]row, error) { return b.overview(n) })
	}
	for _, n := range sz.scan {
		step("scan", func() ([]row, error) { return b.scan(n) })
	}
	for _, n := range sz.replay {
		step("replay", func() ([]row, error) { return b.replay(n) })
	}
	step("filtered", func() ([]row, error) { return b.filtered(sz.filtered) })
	step("returns", func() ([]row, error) { return b.returns(50_000) })
	step("bodies", func() ([]row, error) { return b.bodies() })
	step("inbox", func() ([]row, error) { return b.inbox(sz.inbox) })
	step("canary", func() ([]row, error) { return b.canary() })
	step("export", func() ([]row, error) { return b.exportImport(sz.export) })

	fmt.Println()
	fmt.Print(b.machine())
	fmt.Printf("run took %s\n\n", time.Since(started).Round(time.Second))
	printTable(os.Stdout, rows)
	if failed {
		os.Exit(1)
	}
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive numbers separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}
