// Package inbox reads a consumer's idempotency (inbox) table in PostgreSQL
// to say whether a dead letter's effect was already applied (docs/ARCHITECTURE.md
// §4.5). Connections are read-only with a statement timeout; a page of
// dead letters costs one `= ANY($1)` query. When the database cannot
// answer, the status is Unknown with the reason, and nothing else fails.
package inbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/warrenops/warren/domain"
)

// DefaultStatementTimeout bounds every query when Options leave it unset.
const DefaultStatementTimeout = 2 * time.Second

const defaultConnectTimeout = 3 * time.Second

// Options point at one inbox table.
type Options struct {
	DSN        string
	Table      string // table or schema.table
	IDColumn   string
	TimeColumn string // optional: when the effect was committed
	// StatementTimeout is sent to the server as statement_timeout;
	// DefaultStatementTimeout when zero.
	StatementTimeout time.Duration
}

// Client looks up one inbox table.
type Client struct {
	pool      *pgxpool.Pool
	where     string        // host:port, for messages; never the DSN
	timeout   time.Duration // a query's whole budget, connecting included
	stmt      time.Duration // the server's statement_timeout
	lookupSQL string
	effectSQL string
	secrets   []string
}

// ErrNoTimeColumn means the inbox config names no time column, so there
// is no effect rate or last-effect age to give.
var ErrNoTimeColumn = errors.New("the inbox has no time_column configured")

// Open prepares a read-only pool. It does not connect: an unreachable
// database shows up in Lookup and Effect as an error, and the caller
// shows Unknown with that reason.
func Open(ctx context.Context, o Options) (*Client, error) {
	if o.Table == "" || o.IDColumn == "" {
		return nil, errors.New("inbox needs a table and an id_column")
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		// The parser's message quotes the DSN, password and all.
		return nil, errors.New("inbox DSN is not a valid PostgreSQL connection string (URL or key=value form)")
	}
	cc := cfg.ConnConfig
	cc.RuntimeParams["default_transaction_read_only"] = "on"
	cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	if cc.RuntimeParams["application_name"] == "" {
		cc.RuntimeParams["application_name"] = "warren"
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = defaultConnectTimeout
	}
	cfg.MaxConns = 4
	cfg.MinConns = 0
	c := &Client{
		where:   net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))),
		timeout: o.StatementTimeout + cc.ConnectTimeout,
		stmt:    o.StatementTimeout,
		secrets: []string{o.DSN, cc.Password},
	}
	table := identifier(o.Table)
	id := pgx.Identifier{o.IDColumn}.Sanitize()
	when := "NULL::timestamptz"
	if o.TimeColumn != "" {
		when = pgx.Identifier{o.TimeColumn}.Sanitize() + "::timestamptz"
		c.effectSQL = fmt.Sprintf("SELECT (SELECT count(*) FROM %[1]s WHERE %[2]s >= now() - make_interval(secs => $1)), "+
			"(SELECT max(%[2]s)::timestamptz FROM %[1]s), now()", table, pgx.Identifier{o.TimeColumn}.Sanitize())
	}
	c.lookupSQL = fmt.Sprintf("SELECT %s::text, %s FROM %s WHERE %s = ANY($1)", id, when, table, id)
	c.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, c.explain("open the inbox pool", err)
	}
	return c, nil
}

// identifier quotes table or schema.table.
func identifier(s string) string {
	return pgx.Identifier(strings.SplitN(s, ".", 2)).Sanitize()
}

// Close releases the pool's connections.
func (c *Client) Close() { c.pool.Close() }

// Where names the database for messages: host and port, never the DSN.
func (c *Client) Where() string { return c.where }

// Lookup returns, for the IDs found in the inbox, when their effect was
// committed (the zero time without a time column). An ID that is absent
// is pending. It is one query, whatever the number of IDs.
func (c *Client) Lookup(ctx context.Context, ids []string) (map[string]time.Time, error) {
	found := make(map[string]time.Time, len(ids))
	if len(ids) == 0 {
		return found, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, c.explain("look up the inbox", err)
	}
	defer conn.Release()
	// The statement's parameter type is the ID column's array type;
	// knowing it lets IDs that column cannot hold be left out instead
	// of failing the whole query.
	sd, err := conn.Conn().Prepare(ctx, "warren_inbox_lookup", c.lookupSQL)
	if err != nil {
		return nil, c.explain("look up the inbox", err)
	}
	kind := columnKind(sd.ParamOIDs[0])
	args, byKey := kind.prepare(ids)
	if len(args) == 0 {
		return found, nil
	}
	rows, err := conn.Query(ctx, "warren_inbox_lookup", args)
	if err != nil {
		return nil, c.explain("look up the inbox", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var at *time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return nil, c.explain("read the inbox", err)
		}
		for _, orig := range byKey[kind.key(id)] {
			if at != nil && at.After(found[orig]) {
				found[orig] = *at
			} else if _, ok := found[orig]; !ok {
				found[orig] = time.Time{}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, c.explain("read the inbox", err)
	}
	return found, nil
}

// Effect reads the effect rate over window and the last effect time.
func (c *Client) Effect(ctx context.Context, window time.Duration) (domain.Effect, error) {
	if c.effectSQL == "" {
		return domain.Effect{}, ErrNoTimeColumn
	}
	if window <= 0 {
		return domain.Effect{}, fmt.Errorf("effect window must be positive, got %s", window)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	e := domain.Effect{Window: window}
	var last *time.Time
	err := c.pool.QueryRow(ctx, c.effectSQL, window.Seconds()).Scan(&e.Count, &last, &e.Now)
	if err != nil {
		return domain.Effect{}, c.explain("read the inbox effect rate", err)
	}
	if last != nil {
		e.Last = *last
	}
	e.Rate = float64(e.Count) / window.Seconds()
	return e, nil
}
