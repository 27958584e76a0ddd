package cli

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
func (a *App) warnAuditFile(st audit.Store) {
	fs, ok := st.(*audit.FileStore)
	if !ok || a.auditWarned.Load() {
		return
	}
	if w := fs.ModeWarning(); w != "" && a.auditWarned.CompareAndSwap(false, true) {
		fmt.Fprintln(a.Err, "warren: warning:", sanitize.Text(w))
	}
}
