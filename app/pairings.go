package app

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/warrenops/warren/domain"
)

// Error queues paired by what their messages say (docs/ARCHITECTURE.md
// §4.12) are kept per context in warren's state directory, so that status
// and the next dashboard pair them without reading the messages again.
// The file holds only queue names; losing it loses only those pairings.

// pairingsFile is $XDG_STATE_HOME/warren/pairings.json.
func pairingsFile() string { return filepath.Join(StateDir(), "pairings.json") }

type learnedPair struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	DLQ   string `json:"dlq"`
}

// maxKeptPairs bounds the pairings kept per context.
const maxKeptPairs = 1000

var pairingsMu sync.Mutex

// loadPairings reads the context's learned pairings; a missing or
// unreadable file is none.
func loadPairings(context string) []domain.DLQOverride {
	pairingsMu.Lock()
	defer pairingsMu.Unlock()
	all := readPairings()
	var out []domain.DLQOverride
	for _, p := range all[context] {
		out = append(out, domain.DLQOverride{Vhost: p.Vhost, Queue: p.Queue, DLQ: p.DLQ})
	}
	return out
}

func readPairings() map[string][]learnedPair {
	all := map[string][]learnedPair{}
	b, err := os.ReadFile(pairingsFile())
	if err != nil {
		return all
	}
	if json.Unmarshal(b, &all) != nil {
		return map[string][]learnedPair{}
	}
	return all
}

// keepPairing adds one learned pairing to the context's, replacing an
// older one of the same queue. It writes a new file and renames it into
// place, so a reader never sees half of one.
func keepPairing(context string, l domain.DLQOverride) error {
	pairingsMu.Lock()
	defer pairingsMu.Unlock()
	all := readPairings()
	list := all[context][:0:0]
	for _, p := range all[context] {
		if p.Vhost != l.Vhost || p.Queue != l.Queue {
			list = append(list, p)
		}
	}
	list = append(list, learnedPair{Vhost: l.Vhost, Queue: l.Queue, DLQ: l.DLQ})
	if len(list) > maxKeptPairs {
		list = list[len(list)-maxKeptPairs:]
	}
	all[context] = list
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(pairingsFile())
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	tmp, err := os.CreateTemp(dir, "pairings-*.json")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), pairingsFile())
}

// StateDir is $XDG_STATE_HOME/warren, or ~/.local/state/warren.
func StateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "warren")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "warren")
	}
	return filepath.Join(os.TempDir(), "warren")
}
