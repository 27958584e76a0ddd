package overview

import (
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"
)

// tickMsg asks the overview to fetch a snapshot. The overview's ID and
// the Tag of the polling chain it belongs to let a tick left over from a
// vhost switch or a manual refresh be recognised and dropped.
type tickMsg struct {
	common.Stamp
}

// snapshotMsg carries a fetched snapshot (or why it failed) back to the
// overview that asked, with what it asked for.
type snapshotMsg struct {
	common.Stamp
	Opts domain.SnapshotOptions
	Snap *domain.Snapshot
	Err  error
}
