package queuedetail

import (
	"github.com/warrenops/warren/domain"
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
	Detail *domain.QueueDetail
	Err    error
}
