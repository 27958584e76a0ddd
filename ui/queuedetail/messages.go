package queuedetail

import (
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/common"
)

// tickMsg asks the screen with ID to refresh, if Tag is still its
// polling chain.
type tickMsg struct {
	common.Stamp
}

// detailMsg carries the queue's detail (or why it failed) back to the
// screen that asked.
type detailMsg struct {
	common.Stamp
	Detail *mgmt.QueueDetail
	Err    error
}
