package ops

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Drafts. An edit's draft holds a message's body, so it must not outlive
// the edit: planning the edit removes it; a process that is made to stop
// removes its own (RemoveDrafts, on each signal it handles and on its
// way out); and a draft left by one that was killed outright (SIGKILL,
// a power cut) is removed by the next warren to start once it is a day
// old (RemoveStaleDrafts). Drafts live in the temporary directory, named
// warren-edit-PID-RANDOM.json after the process that wrote them.

const draftPrefix = "warren-edit-"

// StaleDraftAge is how long after its last change a draft counts as left
// behind: an operator may keep an editor open for hours, not for days.
const StaleDraftAge = 24 * time.Hour

// draftPattern is the os.CreateTemp pattern of this process's drafts.
func draftPattern() string { return fmt.Sprintf("%s%d-*.json", draftPrefix, os.Getpid()) }

// RemoveDrafts removes every draft this process wrote. It touches only
// the file system, so a signal handler can call it.
func RemoveDrafts() {
	mine, _ := filepath.Glob(filepath.Join(os.TempDir(), draftPattern()))
	for _, p := range mine {
		_ = os.Remove(p)
	}
}

// RemoveStaleDrafts removes the user's own drafts, whichever process
// wrote them, last changed more than StaleDraftAge ago, and returns how
// many it removed.
func RemoveStaleDrafts() int {
	all, _ := filepath.Glob(filepath.Join(os.TempDir(), draftPrefix+"*.json"))
	n := 0
	for _, p := range all {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < StaleDraftAge {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		if os.Remove(p) == nil {
			n++
		}
	}
	return n
}
