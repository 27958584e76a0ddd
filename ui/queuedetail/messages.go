package queuedetail

import "github.com/warrenops/warren/sources/mgmt"

// tickMsg asks the screen with ID to refresh, if Tag is still its
// polling chain.
type tickMsg struct {
	ID, Tag int
}

// detailMsg carries the queue's detail (or why it failed) back to the
// screen that asked.
type detailMsg struct {
	ID, Tag int
	Detail  *mgmt.QueueDetail
	Err     error
}
