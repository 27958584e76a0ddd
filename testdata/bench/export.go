package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/sources/dlqfile"
)

// exportImport measures `warren dlq export` of n dead letters against
// warren's own scan of the same queue (`dlq stats`: read everything,
// give it back), and `warren dlq import` of the file against the plain
// publish-with-confirms loop publishing the same messages (docs/BENCHMARKS.md).
func (b *bench) exportImport(n int) ([]row, error) {
	const origin, dlq = "orders", "orders.dlq"
	vh, conn, release, err := b.openDLQScene(fmt.Sprintf("export-%d", n), origin, dlq)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	b.logf("rejecting %d messages into %s", n, dlq)
	if err := fillByReject(ctx, conn, origin, dlq, n, 0); err != nil {
		return nil, err
	}
	cfg, err := b.writeConfig(vh, "")
	if err != nil {
		return nil, err
	}
	// The export and the scan take turns, in alternating order, and
	// their medians are compared: one run of each moved by a fifth from
	// one pair to the next, as the import's did.
	file := filepath.Join(b.dir, "export.jsonl")
	var scans, exports []time.Duration
	var exportRSS float64
	for round := range exportRounds {
		b.logf("export round %d of %d", round+1, exportRounds)
		for k := range 2 {
			if (round+k)%2 == 0 {
				scan, _, err := b.timed(ctx, cfg, "dlq", "stats", dlq, "--json")
				if err != nil {
					return nil, err
				}
				scans = append(scans, scan)
			} else {
				export, rss, err := b.timed(ctx, cfg, "dlq", "export", dlq, "--output", file, "--force")
				if err != nil {
					return nil, err
				}
				exports, exportRSS = append(exports, export), max(exportRSS, rss)
			}
			if err := waitDepth(conn, dlq, n, time.Minute); err != nil {
				return nil, err
			}
		}
	}
	scan, export := median(scans), median(exports)
	msgs, err := readExport(file)
	if err != nil {
		return nil, err
	}
	if len(msgs) != n {
		return nil, fmt.Errorf("the export holds %d of %d", len(msgs), n)
	}
	// The broker's own rate swings by a fifth from one run to the next
	// (its message store at work): the import and the loop take turns,
	// each after a purge, and their medians are compared. Each import
	// starts a fresh audit log, as the first did.
	var imps, loops []time.Duration
	var importRSS float64
	for round := range importRounds {
		if err := purge(conn, dlq); err != nil {
			return nil, err
		}
		if err := os.Remove(b.auditPath(vh)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		b.logf("round %d of %d", round+1, importRounds)
		imp, rss, err := b.timed(ctx, cfg, "dlq", "import", file, "--to", dlq, "--yes", "--json")
		if err != nil {
			return nil, err
		}
		importRSS = max(importRSS, rss)
		if err := waitDepth(conn, dlq, n, time.Minute); err != nil {
			return nil, fmt.Errorf("after the import: %w", err)
		}
		if err := purge(conn, dlq); err != nil {
			return nil, err
		}
		b.logf("plain publish-with-confirms loop of %d", n)
		cpu := selfCPU()
		loop, err := publishConfirmed(ctx, conn, "", dlq, n, confirmWindow, true, func(i int) amqp.Publishing { return msgs[i] })
		if err != nil {
			return nil, err
		}
		b.logf("the loop took %s, %s of CPU", loop.Round(time.Millisecond), (selfCPU() - cpu).Round(time.Millisecond))
		b.logf("turn %d: import %s, loop %s", round+1, imp.Round(time.Millisecond), loop.Round(time.Millisecond))
		imps, loops = append(imps, imp), append(loops, loop)
	}
	imp, loop := median(imps), median(loops)
	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	return []row{
		versus(fmt.Sprintf("export rate vs dlq stats scan rate, %d dead letters (medians of %d turns each)", n, exportRounds), rate(export), rate(scan), fmtRate, &cmp{">=", 0.9}),
		versus(fmt.Sprintf("import rate vs plain publish-with-confirms loop of the same messages, %d (medians of %d turns each)", n, importRounds), rate(imp), rate(loop), fmtRate, &cmp{">=", 0.9}),
		absolute(fmt.Sprintf("export resident memory, %d dead letters", n), exportRSS, fmtMiB, "", cmp{"<", 150}),
		absolute(fmt.Sprintf("import resident memory, %d messages (the largest of the turns)", n), importRSS, fmtMiB, "", cmp{"<", 150}),
	}, nil
}

// exportRounds is how many times the export and the scan each run.
const exportRounds = 5

// importRounds is how many times the import and the loop each run: the
// broker's rate moves by a fifth between two runs of the same loop, and
// three turns were too few for a median to hold still.
const importRounds = 5

// timed runs warren with args and returns how long it took and its peak
// resident memory in MiB.
func (b *bench) timed(ctx context.Context, cfg string, args ...string) (time.Duration, float64, error) {
	b.logf("warren %v", args)
	cmd := b.warrenCmd(ctx, cfg, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	// Polled, not the kernel's maxrss at exit: a child counts its parent's
	// pages between fork and exec, and this parent holds the messages.
	hwm := watchHWM(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("warren %v: %w: %s", args, err, stderr.Bytes())
	}
	took := time.Since(start)
	ps := cmd.ProcessState
	b.logf("warren %s took %s, %s of CPU (%s user, %s system)", args[:2], took.Round(time.Millisecond),
		(ps.UserTime() + ps.SystemTime()).Round(time.Millisecond), ps.UserTime().Round(time.Millisecond), ps.SystemTime().Round(time.Millisecond))
	return took, <-hwm, nil
}

// readExport reads an export file's messages as they would be published.
func readExport(path string) ([]amqp.Publishing, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := dlqfile.NewReader(f)
	if err != nil {
		return nil, err
	}
	var out []amqp.Publishing
	for {
		m, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, m.Publishing)
	}
}

// selfCPU is the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
