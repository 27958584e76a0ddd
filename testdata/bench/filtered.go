package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// halfFilter matches every other dead letter the harness makes: their
// message IDs end in a digit counted from 0.
const halfFilter = `message_id matches "[13579]$"`

// filtered measures `warren dlq replay --filter` over 2n dead letters of
// which the filter chooses every other one: n move, n stay held in their
// place until the end. Its anchor is the same command without a filter
// moving n from a DLQ of n, the same number of copies. The broker finds
// each acked delivery by passing those held before it on its channel, so
// the ratio and the brokers' CPU say whether holding half costs in
// proportion or grows with the square of the size.
func (b *bench) filtered(n int) ([]row, error) {
	const origin, dlq = "orders", "orders.dlq"
	vh, conn, release, err := b.openDLQScene(fmt.Sprintf("filtered-%d", n), origin, dlq)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cfg, err := b.writeConfig(vh, "")
	if err != nil {
		return nil, err
	}
	never := time.Duration(1<<63 - 1)
	half, whole := never, never
	var halfCPU, wholeCPU cpuUse
	for round := range replayRounds {
		b.logf("rejecting %d messages into %s", 2*n, dlq)
		if err := fillByReject(ctx, conn, origin, dlq, 2*n, 4*n*round); err != nil {
			return nil, err
		}
		b.logf("warren dlq replay --filter of %d of %d", n, 2*n)
		c0 := sampleCPU()
		took, err := b.filteredCommand(ctx, cfg, dlq, n, "--filter", halfFilter)
		if err != nil {
			return nil, err
		}
		if took < half {
			half, halfCPU = took, c0.until(sampleCPU())
		}
		if err := waitDepth(conn, origin, n, time.Minute); err != nil {
			return nil, err
		}
		if err := waitDepth(conn, dlq, n, time.Minute); err != nil {
			return nil, fmt.Errorf("after the filtered replay: %w", err)
		}
		for _, q := range []string{origin, dlq} {
			if err := purge(conn, q); err != nil {
				return nil, err
			}
		}

		b.logf("rejecting %d messages into %s", n, dlq)
		if err := fillByReject(ctx, conn, origin, dlq, n, 4*n*round+2*n); err != nil {
			return nil, err
		}
		b.logf("warren dlq replay of %d", n)
		c0 = sampleCPU()
		if took, err = b.filteredCommand(ctx, cfg, dlq, n); err != nil {
			return nil, err
		}
		if took < whole {
			whole, wholeCPU = took, c0.until(sampleCPU())
		}
		if err := moved(conn, origin, dlq, n); err != nil {
			return nil, fmt.Errorf("after the replay: %w", err)
		}
	}
	label := fmt.Sprintf("%s of %s dead letters", thousands(n), thousands(2*n))
	return []row{
		versus("filtered replay (half chosen, half held) vs replay of as many, "+label, rate(n, half), rate(n, whole), fmtRate, nil),
		info("  brokers' CPU: filtered / unfiltered, "+label, halfCPU.String(), wholeCPU.String()),
		versus("  brokers' CPU time per copy: filtered vs unfiltered, "+label,
			float64(halfCPU.perMessage(rate(n, half)).Microseconds()), float64(wholeCPU.perMessage(rate(n, whole)).Microseconds()), fmtMicros, nil),
	}, nil
}

// filteredCommand runs `warren dlq replay QUEUE --yes --json` with args
// and checks that it confirmed n copies.
func (b *bench) filteredCommand(ctx context.Context, cfg, queue string, n int, args ...string) (time.Duration, error) {
	cmd := b.warrenCmd(ctx, cfg, append([]string{"dlq", "replay", queue, "--yes", "--json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("warren dlq replay %q: %w: %s", args, err, stderr.Bytes())
	}
	took := time.Since(start)
	var res struct {
		Confirmed int `json:"confirmed"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return 0, fmt.Errorf("warren dlq replay --json: %w", err)
	}
	if res.Confirmed != n {
		return 0, fmt.Errorf("warren replayed %d, want %d: %s", res.Confirmed, n, stderr.Bytes())
	}
	return took, nil
}
