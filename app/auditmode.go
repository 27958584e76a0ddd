package app

import (
	"fmt"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/text/sanitize"
)

// warnAuditFile says on stderr, once a run, that the audit file's mode
// lets others at it, and the chmod that fixes it. A file others may
// write is refused by every append as well (audit.FileStore.ModeWarning);
// the warning reaches the commands that only read it (verify, export)
// and says why before an action is refused. The dashboard has it said
// before it takes the terminal (RunDashboard), and nothing after.
func (a *Factory) warnAuditFile(st audit.Store) {
	fs, ok := st.(*audit.FileStore)
	if !ok || a.auditWarned.Load() {
		return
	}
	if w := fs.ModeWarning(); w != "" && a.auditWarned.CompareAndSwap(false, true) {
		fmt.Fprintln(a.s.Err, "warren: warning:", sanitize.Text(w))
	}
}

// TerminalTaken says the dashboard has the terminal: nothing may be
// written to stderr under it, so the audit file's mode is not warned of
// again (RunDashboard warns before it starts).
func (a *Factory) TerminalTaken() { a.auditWarned.Store(true) }
