package audit

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultTable is the PostgreSQL table of the team store.
const DefaultTable = "warren_audit"

// schemaVersion is the layout this code writes; the version table lets a
// later warren migrate, and an older one refuse a newer layout.
const schemaVersion = 1

// lockClass is the first key of pg_advisory_xact_lock(int4, int4) ("warr");
// the second is derived from the table, so each table keeps its own chain
// and unrelated tables do not wait for each other.
const lockClass int32 = 0x77617272

var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,54}$`)

// PGStore keeps the chain in a PostgreSQL table shared by a team. Appends
// run in a transaction holding a transaction-level advisory lock, so
// concurrent operators read the same last record and extend one chain.
//
// One store holds one connection, opened on first use and reopened after
// it breaks; its methods take turns on it, so a Scan callback must not call
// back into the same store.
//
// Table layout: seq bigint primary key, time timestamptz, operation text,
// outcome text, hash text, and record text holding the record's JSON
// exactly as a file store line, which is what Scan and Verify read; the
// other columns are for queries.
type PGStore struct {
	cfg      *pgx.ConnConfig
	name     string // as the config names it
	table    string // sanitised, possibly schema-qualified
	version  string // sanitised name of the schema version table
	lockKey  int32
	where    string
	password string

	mu    sync.Mutex // guards conn and ready, and serialises use of conn
	conn  *pgx.Conn
	ready bool
}

// OpenPostgres prepares a store on table (schema-qualified allowed) of the
// database dsn names. It does not connect; the first operation does, and
// refuses a table that does not exist (an administrator creates it:
// Schema).
func OpenPostgres(dsn, table string) (*PGStore, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("audit: the postgres store needs a DSN (set the variable audit_dsn_env names)")
	}
	if !tableName.MatchString(table) {
		return nil, fmt.Errorf("audit: table name %q: want letters, digits and underscores, optionally schema.table", table)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// The parse error quotes the DSN; say only that it is invalid.
		return nil, errors.New("audit: the postgres DSN is not a valid connection string or URL")
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	ident := pgx.Identifier(strings.Split(table, "."))
	version := append(pgx.Identifier{}, ident...)
	version[len(version)-1] += "_schema"
	return &PGStore{
		cfg:      cfg,
		name:     table,
		table:    ident.Sanitize(),
		version:  version.Sanitize(),
		lockKey:  int32(crc32.ChecksumIEEE([]byte(table))),
		where:    fmt.Sprintf("postgres table %s on %s:%d/%s", table, cfg.Host, cfg.Port, cfg.Database),
		password: cfg.Password,
	}, nil
}

func (s *PGStore) Describe() string { return s.where }

func (s *PGStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close(context.Background())
	s.conn = nil
	return err
}

func (s *PGStore) Append(ctx context.Context, rec Record) (Record, error) {
	out, err := s.AppendAll(ctx, []Record{rec})
	if err != nil {
		return Record{}, err
	}
	return out[0], nil
}

func (s *PGStore) AppendAll(ctx context.Context, recs []Record) ([]Record, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	if err := validateAll(recs); err != nil {
		return nil, err
	}
	return s.appendAfter(ctx, func(*Record) ([]Record, error) { return recs, nil })
}

// appendAfter appends the records build makes from the last record (nil
// for an empty table) in one transaction holding the append lock: what
// build reads is still the last record when its records are linked after
// it.
func (s *PGStore) appendAfter(ctx context.Context, build func(prev *Record) ([]Record, error)) ([]Record, error) {
	var out []Record
	err := s.with(ctx, "append", func(c *pgx.Conn) error {
		return pgx.BeginTxFunc(ctx, c, readCommitted, func(tx pgx.Tx) error {
			prev, err := s.lockedLast(ctx, tx)
			if err != nil {
				return err
			}
			recs, err := build(prev)
			if err != nil {
				return err
			}
			if err := validateAll(recs); err != nil {
				return err
			}
			out = make([]Record, len(recs))
			now := time.Now()
			for i, rec := range recs {
				var line []byte
				var err error
				out[i], line, err = sealLine(rec, prev, now)
				if err != nil {
					return err
				}
				prev = &out[i]
				_, err = tx.Exec(ctx, "INSERT INTO "+s.table+" (seq, time, operation, outcome, hash, record) VALUES ($1, $2, $3, $4, $5, $6)",
					out[i].Seq, out[i].Time, out[i].Operation, out[i].Outcome, out[i].Hash, string(line))
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errProbeDone rolls back the Check transaction after its probe insert.
var errProbeDone = errors.New("probe done")

// Check inserts a probe row under the append lock and rolls it back: that
// proves connection, table, privileges and a writable primary at once.
func (s *PGStore) Check(ctx context.Context) error {
	return s.with(ctx, "check", func(c *pgx.Conn) error {
		err := pgx.BeginTxFunc(ctx, c, readCommitted, func(tx pgx.Tx) error {
			if _, err := s.lockedLast(ctx, tx); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO "+s.table+" (seq, time, operation, outcome, hash, record) VALUES (-1, now(), '', 'probe', '', '')")
			if err != nil {
				return err
			}
			return errProbeDone
		})
		if errors.Is(err, errProbeDone) {
			return nil
		}
		return err
	})
}

func (s *PGStore) Last(ctx context.Context) (Record, bool, error) {
	var prev *Record
	err := s.with(ctx, "read last record", func(c *pgx.Conn) error {
		var err error
		prev, err = s.last(ctx, c)
		return err
	})
	if err != nil || prev == nil {
		return Record{}, false, err
	}
	return *prev, true, nil
}

func (s *PGStore) Scan(ctx context.Context, fn func(Record) error) error {
	return s.scan(ctx, nil, 0, fn)
}

// scanAfter is Scan of the records after seq.
func (s *PGStore) scanAfter(ctx context.Context, seq int64, fn func(Record) error) error {
	return s.scan(ctx, nil, seq, fn)
}

// ScanWhere is Scan of the records whose stored line holds one of
// needles: the database skips the others (see ScanWhere).
func (s *PGStore) ScanWhere(ctx context.Context, needles [][]byte, fn func(Record) error) error {
	if len(needles) == 0 {
		return nil
	}
	return s.scan(ctx, needles, 0, fn)
}

// scan reads the records after seq after, of the lines holding one of
// needles when needles is not nil.
func (s *PGStore) scan(ctx context.Context, needles [][]byte, after int64, fn func(Record) error) error {
	args := []any{after}
	where := "seq > $1"
	if needles != nil {
		or := make([]string, len(needles))
		for i, n := range needles {
			or[i] = fmt.Sprintf("strpos(record, $%d) > 0", i+2)
			args = append(args, string(n))
		}
		where += " AND (" + strings.Join(or, " OR ") + ")"
	}
	query := "SELECT seq, record FROM " + s.table + " WHERE " + where + " ORDER BY seq"
	var fnErr error
	err := s.with(ctx, "scan", func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var line string
			if err := rows.Scan(&seq, &line); err != nil {
				return err
			}
			rec, err := parseLine([]byte(line))
			if err != nil {
				fnErr = &CorruptError{Seq: seq, Err: err}
				return nil
			}
			if err := fn(rec); err != nil {
				fnErr = err
				return nil
			}
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	return fnErr
}

// with runs fn on the store's connection, connecting and checking the
// table first when needed, and turns database errors into display-safe
// ones.
func (s *PGStore) with(ctx context.Context, op string, fn func(*pgx.Conn) error) error {
	return s.connected(ctx, op, func(c *pgx.Conn) error {
		if !s.ready {
			if err := s.checkSchema(ctx, c); err != nil {
				return err
			}
			s.ready = true
		}
		return fn(c)
	})
}

// connected runs fn on the store's connection, connecting first when
// needed, and turns database errors into display-safe ones.
func (s *PGStore) connected(ctx context.Context, op string, fn func(*pgx.Conn) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.conn.IsClosed() {
		c, err := pgx.ConnectConfig(ctx, s.cfg)
		if err != nil {
			return s.fail("connect", err)
		}
		s.conn = c
	}
	if err := fn(s.conn); err != nil {
		return s.fail(op, err)
	}
	return nil
}

// readCommitted is the isolation of every transaction that takes the
// append lock, whatever the database's default: under a snapshot taken
// before the lock was granted, what is read after waiting would miss
// the other holder's writes (its last record, its new table), and the
// append would collide on a seq.
var readCommitted = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *PGStore) lockedLast(ctx context.Context, tx pgx.Tx) (*Record, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, $2)", lockClass, s.lockKey); err != nil {
		return nil, err
	}
	return s.last(ctx, tx)
}

func (s *PGStore) last(ctx context.Context, q querier) (*Record, error) {
	var seq int64
	var line string
	err := q.QueryRow(ctx, "SELECT seq, record FROM "+s.table+" ORDER BY seq DESC LIMIT 1").Scan(&seq, &line)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec, err := parseLine([]byte(line))
	if err != nil {
		return nil, &CorruptError{Seq: seq, Err: err}
	}
	return &rec, nil
}

// checkSchema finds the table an administrator created (Schema) at the
// version this warren writes. warren never creates it (pgschema.go).
func (s *PGStore) checkSchema(ctx context.Context, c *pgx.Conn) error {
	var table, version bool
	if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL", s.table, s.version).Scan(&table, &version); err != nil {
		return err
	}
	if !table || !version {
		return &NoTableError{Table: s.name}
	}
	var v int
	if err := c.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+s.version).Scan(&v); err != nil {
		return err
	}
	if v != schemaVersion {
		return fmt.Errorf("%s says schema version %d, this warren writes version %d", s.version, v, schemaVersion)
	}
	return nil
}

// NoTableError refuses a team store whose table does not exist yet.
type NoTableError struct{ Table string }

func (e *NoTableError) Error() string {
	flag := ""
	if e.Table != DefaultTable {
		flag = " --table " + e.Table
	}
	return fmt.Sprintf("the table %s (or %s_schema) does not exist, and warren does not create it, since its creator would own it and could UPDATE or DELETE its rows: "+
		"an administrator creates it with `warren audit init-db%s --owner ROLE --operators ROLE`", e.Table, e.Table, flag)
}

// fail wraps a database error for display. Connection errors name the user
// and database, never the password; the password is masked anyway in case
// a server message echoes it.
func (s *PGStore) fail(op string, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return fmt.Errorf("audit: %s: %w", s.where, err)
	}
	msg := err.Error()
	if s.password != "" {
		msg = strings.ReplaceAll(msg, s.password, "xxxxx")
	}
	return &pgError{msg: fmt.Sprintf("audit: %s (%s): %s", s.where, op, msg), err: err}
}

type pgError struct {
	msg string
	err error
}

func (e *pgError) Error() string { return e.msg }
func (e *pgError) Unwrap() error { return e.err }
