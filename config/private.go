package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// ErrRefused marks what warren will not act on for safety's sake, as a
// guardrail refuses (exit 3): a secret's file others can read, a config
// found in the working directory that chooses where a secret comes from.
var ErrRefused = errors.New("refused")

// refusal is an error that errors.Is reports as ErrRefused.
type refusal struct{ error }

func (r refusal) Is(target error) bool { return target == ErrRefused }
func (r refusal) Unwrap() error        { return r.error }

// readPrivate reads a file holding a secret (key names the setting that
// points at it), refusing it unless it is a regular file of the user's
// own that no one else may read or write, as ssh refuses a private key.
// The checks look at the file that was opened, so what is read is what
// was checked.
func readPrivate(key, path string) ([]byte, error) {
	// A FIFO would block the open: look before opening.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notPrivate(key, path, fi)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := notPrivate(key, path, fi); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// notPrivate says, as one sentence with the command that fixes it, why
// fi cannot hold a secret; nil when it can.
func notPrivate(key, path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return refusal{fmt.Errorf("%s %s is not a regular file (mode %s): a secret must come from a file of your own that only you can read; point %s at the file itself",
			key, path, fi.Mode(), key)}
	}
	uid, owner := ownerOf(fi)
	me := os.Getuid()
	open := fi.Mode().Perm()&0o077 != 0
	if uid == me && !open {
		return nil
	}
	var fix []string
	if uid != me {
		fix = append(fix, "chown "+userName(me)+" "+shellQuote(path))
	}
	if open {
		fix = append(fix, "chmod 600 "+shellQuote(path))
	}
	return refusal{fmt.Errorf("%s %s has mode %04o and owner %s: a secret's file must be yours (%s) and readable by no one else, as ssh asks of a private key; `%s` fixes it",
		key, path, fi.Mode().Perm(), owner, userName(me), strings.Join(fix, " && "))}
}

// writableByOthers says why a file warren keeps for itself cannot be
// believed, or "" when it is the user's own and no one else may write it.
func writableByOthers(fi fs.FileInfo) string {
	uid, owner := ownerOf(fi)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("it is not a regular file (mode %s)", fi.Mode())
	case uid != os.Getuid():
		return fmt.Sprintf("its owner is %s, not you (%s)", owner, userName(os.Getuid()))
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Sprintf("others may write it (mode %04o)", fi.Mode().Perm())
	}
	return ""
}

// ownerOf is the uid owning fi and its name for a sentence.
func ownerOf(fi fs.FileInfo) (int, string) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return os.Getuid(), userName(os.Getuid())
	}
	return int(st.Uid), userName(int(st.Uid))
}

// userName is uid's login name, or "uid N" when it has none.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(uid)
}

// shellQuote quotes path for a command the operator may paste.
func shellQuote(path string) string {
	if path != "" && strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
