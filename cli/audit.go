package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newAuditCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Export, verify and follow the audit log"}
	cmd.AddCommand(newAuditExportCmd(a), newAuditVerifyCmd(a), newAuditTailCmd(a), newAuditInitDBCmd(a))
	return cmd
}

func newAuditExportCmd(a *App) *cobra.Command {
	var outFormat, since, until, operation string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the audit records to stdout as CSV or JSONL",
		Long: "Write the audit records to stdout, one per line (JSONL) or row (CSV, with\n" +
			"list and detail cells as JSON). --since and --until take an RFC 3339 time,\n" +
			"a date (2024-05-01, UTC) or a duration meaning that long ago (24h).\n" +
			"--operation ID writes that operation's records only; each still carries its\n" +
			"hash and prev_hash, so it can be checked against the chain.\n" +
			"The output is the same on a terminal, in a file or in a pipe, and safe in\n" +
			"each: control and bidirectional characters are written as escapes (\\u001b\n" +
			"in JSON; \\x1b or \\u202e in a CSV text cell, where a backslash that would\n" +
			"read as the start of an escape is doubled), and a CSV cell that would start\n" +
			"like a spreadsheet formula (=, +, -, @), or with ', gets a ' in front. Both\n" +
			"read back exactly, so each exported record still matches its hash.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if outFormat != audit.FormatCSV && outFormat != audit.FormatJSONL {
				return app.Usage(fmt.Errorf("--format %q: want csv or jsonl", outFormat))
			}
			now := time.Now()
			from, err := parseWhen(since, now)
			if err != nil {
				return app.Usage(fmt.Errorf("--since: %w", err))
			}
			to, err := parseWhen(until, now)
			if err != nil {
				return app.Usage(fmt.Errorf("--until: %w", err))
			}
			operation = strings.TrimSpace(operation)
			if cmd.Flags().Changed("operation") && operation == "" {
				return app.Usage(errors.New("--operation is empty: give an operation ID, as `warren audit tail` lists them"))
			}
			st, err := a.Factory().AuditStore()
			if err != nil {
				return err
			}
			defer st.Close()
			sel := audit.Selection{Since: from, Until: to, Operation: operation}
			n, err := audit.ExportSelected(cmd.Context(), st, a.Out, outFormat, sel)
			var unknown *audit.UnknownOperationError
			if errors.As(err, &unknown) {
				return app.Usage(errors.New(sanitize.Text(err.Error())))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Err, "exported %s from %s\n", format.Plural(n, "record"), sanitize.Text(st.Describe()))
			// The records carry their hashes, but a reader of the export
			// should not have to find out the chain broke.
			res, err := audit.Verify(cmd.Context(), st)
			if err != nil {
				return err
			}
			if !res.OK {
				fmt.Fprintf(a.Err, "warning: the audit chain is broken: %s; the records from there on cannot be trusted (warren audit verify)\n", sanitize.Text(res.String()))
				return app.Quiet(app.ExitFailure)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&outFormat, "format", audit.FormatJSONL, "csv or jsonl")
	f.StringVar(&since, "since", "", "only records at or after T (RFC 3339, date, or a duration ago such as 24h)")
	f.StringVar(&until, "until", "", "only records before T (same forms as --since)")
	f.StringVar(&operation, "operation", "", "only the records of operation `ID` (as warren audit tail lists it)")
	return cmd
}

const verifyLong = `Recompute the hash chain and name the first broken record, then print the
head: the last record's seq and hash. Keep the head (write it in the ticket);
--expect-head SEQ:HASH later proves the log still holds that record with that
hash, which the chain alone cannot: a log cut short at its end, emptied, or
rewritten and rehashed is still a valid chain. --allowed-signers FILE checks
the signature of every checkpoint (written when the context has an
audit_signing_key) and says how many records follow the last one unsigned.
Exit 1 when the chain is broken, the expected head is not there, or a
checkpoint's signature does not hold.`

func newAuditVerifyCmd(a *App) *cobra.Command {
	var expect, signersFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Recompute the hash chain, print the head, check a kept head (exit 1 when broken)",
		Long:  verifyLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opt audit.VerifyOptions
			if cmd.Flags().Changed("expect-head") {
				h, err := audit.ParseHead(expect)
				if err != nil {
					return app.Usage(fmt.Errorf("--expect-head %w", err))
				}
				opt.ExpectHead = &h
			}
			if cmd.Flags().Changed("allowed-signers") {
				signers, err := readAllowedSigners(signersFile)
				if err != nil {
					return app.Usage(fmt.Errorf("--allowed-signers: %w", err))
				}
				opt.Signers = signers
			}
			st, err := a.Factory().AuditStore()
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := audit.VerifyWith(cmd.Context(), st, opt)
			if err != nil {
				return err
			}
			if res.Records == 0 && res.OK {
				// An empty log verifies; a mistyped path is one.
				fmt.Fprintf(a.Err, "note: %s holds no record: check that it is the log you meant (audit in the context's config)\n", sanitize.Text(st.Describe()))
			}
			if asJSON {
				if err := writeJSON(a.Out, verifyJSONOf(res)); err != nil {
					return err
				}
			} else {
				for _, l := range res.Lines() {
					fmt.Fprintln(a.Out, sanitize.Text(l))
				}
			}
			if !res.OK {
				if asJSON {
					return &app.ExitError{Code: app.ExitFailure, Err: fmt.Errorf("audit log in %s: %s", st.Describe(), sanitize.Text(res.String()))}
				}
				// The lines above gave the reason; this names the log once.
				return &app.ExitError{Code: app.ExitFailure, Err: fmt.Errorf("audit log in %s failed verification", st.Describe())}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&expect, "expect-head", "", "fail unless the log holds this head, as verify or an operation printed it: SEQ:HASH (HASH with or without sha256:)")
	f.StringVar(&signersFile, "allowed-signers", "", "check every checkpoint's signature against this OpenSSH allowed_signers `FILE` (lines: principal key-type base64-key)")
	f.BoolVar(&asJSON, "json", false, "print JSON: ok, records, verdict, head_seq, head_hash, broken_seq, reason, expected_head, checkpoints")
	return cmd
}

func readAllowedSigners(path string) (*audit.AllowedSigners, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return audit.ParseAllowedSigners(f, path)
}

// verifyJSON is the `audit verify --json` contract. head_seq and
// head_hash name the last intact record (0 and "" for none).
type verifyJSON struct {
	OK           bool            `json:"ok"`
	Records      int             `json:"records"`
	Verdict      string          `json:"verdict"`
	HeadSeq      int64           `json:"head_seq"`
	HeadHash     string          `json:"head_hash"`
	BrokenSeq    int64           `json:"broken_seq,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	ExpectedHead *expectHeadJSON `json:"expected_head,omitempty"`
	Checkpoints  *checkpointJSON `json:"checkpoints,omitempty"`
}

type checkpointJSON struct {
	Signed        int    `json:"signed"`
	LastSeq       int64  `json:"last_signed_seq"`
	SignedBy      string `json:"signed_by"`
	UnsignedAfter int    `json:"unsigned_after"`
}

type expectHeadJSON struct {
	Seq       int64  `json:"seq"`
	Hash      string `json:"hash"`
	Held      bool   `json:"held"`
	Following int    `json:"following"`
	Problem   string `json:"problem,omitempty"`
}

func verifyJSONOf(res domain.AuditResult) verifyJSON {
	out := verifyJSON{OK: res.OK, Records: res.Records, Verdict: res.String(),
		HeadSeq: res.LastSeq, HeadHash: res.LastHash, BrokenSeq: res.BrokenSeq, Reason: res.Reason}
	if e := res.Expect; e != nil {
		out.ExpectedHead = &expectHeadJSON{Seq: e.Head.Seq, Hash: e.Head.Hash, Held: e.Held, Following: e.Following, Problem: e.Problem}
	}
	if c := res.Checkpoints; c != nil {
		out.Checkpoints = &checkpointJSON{Signed: c.Signed, LastSeq: c.LastSeq, SignedBy: c.Principals, UnsignedAfter: c.Unsigned}
	}
	return out
}

func newAuditTailCmd(a *App) *cobra.Command {
	var n int
	var follow bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Show the latest operations, one line each; INCOMPLETE ones have no final record",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n <= 0 {
				return app.Usage(fmt.Errorf("-n %d: want a positive count", n))
			}
			if interval <= 0 {
				return app.Usage(fmt.Errorf("--interval %s: want a positive duration", interval))
			}
			st, err := a.Factory().AuditStore()
			if err != nil {
				return err
			}
			defer st.Close()
			return a.auditTail(cmd.Context(), st, n, follow, interval)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&n, "lines", "n", 20, "how many operations to show")
	f.BoolVarP(&follow, "follow", "f", false, "keep printing operations as they start and finish")
	f.DurationVar(&interval, "interval", 2*time.Second, "how often --follow looks for new records")
	return cmd
}

// auditTail prints the last n operations, then with follow, every
// operation that appears or finishes, until ctx ends. The log is read
// once; following, only what was appended since is read (audit.Tailer),
// into the same summaries.
func (a *App) auditTail(ctx context.Context, st audit.Store, n int, follow bool, interval time.Duration) error {
	shown := map[string]bool{} // operation → printed as finished
	show := func(sums []domain.OperationSummary) {
		for _, s := range sums {
			done, seen := shown[s.Operation]
			if seen && (done || s.Incomplete()) {
				continue
			}
			shown[s.Operation] = !s.Incomplete()
			fmt.Fprintln(a.Out, summaryLine(s))
		}
	}
	var z audit.Summarizer
	var chain audit.Watch
	warned := false
	tail := audit.NewTailer(st)
	read := func() error {
		// A log begun again (moved aside for a new chain) is summarized
		// anew; what was printed stays printed.
		err := tail.Next(ctx, func() { z, chain, warned = audit.Summarizer{}, audit.Watch{}, false }, func(r audit.Record) error {
			z.Add(r)
			chain.Add(r)
			return nil
		})
		// What the lines say of a chain that broke cannot be trusted
		// from there on: said once, and `audit verify` says the rest.
		if seq, why, broken := chain.Broken(); broken && !warned {
			warned = true
			fmt.Fprintf(a.Err, "warning: the audit chain in %s is broken at seq %d (%s): what it holds from there on cannot be trusted; run warren audit verify\n",
				sanitize.Text(st.Describe()), seq, sanitize.Text(why))
		}
		return err
	}
	if err := read(); err != nil {
		return err
	}
	sums := z.Summaries()
	show(sums[max(0, len(sums)-n):])
	if !follow {
		if warned {
			return app.Quiet(app.ExitFailure)
		}
		return nil
	}
	for _, s := range sums[:max(0, len(sums)-n)] {
		shown[s.Operation] = !s.Incomplete()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := read(); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		show(z.Summaries())
	}
}

// summaryLine is one operation of audit tail, e.g.
// 2024-05-01T03:15:02Z  done        replay  OP  ana  / orders.dlq -> orders  selected 37  confirmed 30  returned 2
func summaryLine(s domain.OperationSummary) string {
	status := s.State()
	from := sanitize.Text(s.Queue)
	if s.Action == actions.ActionImport {
		// Its messages come from a file, exported from that queue; the
		// vhost is where they go.
		from = "(a file of " + from + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-10s  %-10s  %s  %s  %s %s -> %s  selected %d",
		format.Time(s.Started), status, sanitize.Text(s.Action), sanitize.Text(s.Operation),
		sanitize.Text(s.Operator), sanitize.Text(s.Vhost), from, sanitize.Text(s.Target), s.Selected)
	for _, o := range outcomeOrder(s.Counts) {
		fmt.Fprintf(&b, "  %s %d", sanitize.Text(o), s.Counts[o])
	}
	return b.String()
}

// outcomeOrder lists the known outcomes first, in their usual order, then
// any others alphabetically.
func outcomeOrder(counts map[string]int) []string {
	var known, other []string
	for _, o := range domain.MessageOutcomes {
		if counts[o] > 0 {
			known = append(known, o)
		}
	}
	for o := range counts {
		if !slices.Contains(domain.MessageOutcomes, o) {
			other = append(other, o)
		}
	}
	sort.Strings(other)
	return append(known, other...)
}

// parseWhen reads a --since/--until value: empty (no bound), RFC 3339, a
// date in UTC, or a duration before now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time (2024-05-01T03:00:00Z), a date (2024-05-01) or a duration ago (24h)", s)
}
