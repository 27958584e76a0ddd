package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/text/sanitize"
)

const initDBLong = `Print the SQL that creates the team audit table (audit = "postgres") for an
administrator to run, or with --apply run it, in one transaction, as the role
the context's audit DSN connects as. The table is owned by --owner (or by the
role that runs the SQL), a role your operators are not and are not members
of; --operators, the role their warren connects as, may INSERT and SELECT
only; a trigger refuses UPDATE, DELETE and TRUNCATE. warren never creates the
table itself: whoever creates a table owns it, and an owner can rewrite it.
--apply refuses operators who could still UPDATE, DELETE or TRUNCATE it (a
superuser, a member of the owner's role), and creates nothing then.`

func newAuditInitDBCmd(a *App) *cobra.Command {
	var sc audit.Schema
	var apply bool
	cmd := &cobra.Command{
		Use:   "init-db",
		Short: "Print (or --apply) the SQL that creates the team audit table: operators may INSERT and SELECT only",
		Long:  initDBLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("table") {
				sc.Table = a.auditTable()
			}
			sql, err := sc.SQL()
			if err != nil {
				return app.Usage(err)
			}
			if !apply {
				fmt.Fprint(a.Out, sql)
				return nil
			}
			return a.initDB(cmd.Context(), sc)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sc.Table, "table", audit.DefaultTable, "the table, TABLE or SCHEMA.TABLE (default: the context's, else warren_audit)")
	f.StringVar(&sc.Owner, "owner", "", "the role that owns the table, one the operators are not (default: the role that runs the SQL)")
	f.StringVar(&sc.Operators, "operators", "", "the role the operators' warren connects as (a group role): granted INSERT and SELECT only")
	f.BoolVar(&apply, "apply", false, "run the SQL as the role the context's audit DSN connects as, instead of printing it")
	return cmd
}

// auditTable is the team store's table the context names, or the
// default.
func (a *App) auditTable() string {
	c, err := a.Factory().Config()
	if err != nil || !c.UsesPostgresAudit() {
		return audit.DefaultTable
	}
	if _, table, ok := strings.Cut(c.Audit, ":"); ok {
		return table
	}
	return audit.DefaultTable
}

func (a *App) initDB(ctx context.Context, sc audit.Schema) error {
	c, err := a.Factory().Config()
	if err != nil {
		return err
	}
	if c.ReadOnly {
		return app.Refused(fmt.Errorf("context %q is read-only: audit init-db --apply refused; without --apply it prints the SQL", c.Name))
	}
	if !c.UsesPostgresAudit() {
		return app.Usage(errors.New("--apply: the context's audit store is not PostgreSQL (audit = \"postgres\" or \"postgres:TABLE\" with audit_dsn_env); without --apply init-db prints the SQL"))
	}
	dsn, err := c.AuditDSN()
	if err != nil {
		return app.Usage(err)
	}
	g, err := audit.InitDB(ctx, dsn, sc)
	if err != nil {
		return err
	}
	owner := sc.Owner
	if owner == "" {
		owner = "the role that ran it"
	}
	fmt.Fprintf(a.Out, "created %s and %s_schema, owned by %s, with the append-only trigger\n", sanitize.Text(sc.Table), sanitize.Text(sc.Table), sanitize.Text(owner))
	fmt.Fprintf(a.Out, "%-22s ok    %s\n", "audit grants", sanitize.Text(g.String()))
	return nil
}

// auditGrantsCheck is `config check`'s line on what the context's role
// may do to the team audit table: a warning, never a failure, when it
// could rewrite the log. Nothing is printed when the table cannot be read:
// the audit store's line says why.
func (a *App) auditGrantsCheck(ctx context.Context) {
	c, err := a.Factory().Config()
	if err != nil || !c.UsesPostgresAudit() {
		return
	}
	st, err := a.Factory().AuditStore()
	if err != nil {
		return
	}
	defer st.Close()
	pg, ok := st.(interface {
		Grants(context.Context) (audit.Grants, error)
	})
	if !ok {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	g, err := pg.Grants(cctx)
	if err != nil {
		return
	}
	state := "ok"
	if !g.OK() {
		state = "warn"
	}
	fmt.Fprintf(a.Out, "%-22s %-5s %s\n", "audit grants", state, sanitize.Text(g.String()))
}
