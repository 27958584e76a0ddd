package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// A config file found in the working directory may come with a cloned
// repository; warren reads it only once the operator has trusted it as
// it is (docs/ARCHITECTURE.md §6). The record of what was trusted lives
// in warren's own state, never beside the file.

// trustRecord is one trusted file: its absolute path and the sha256 of
// its contents when it was trusted.
type trustRecord struct {
	Path      string    `json:"path"`
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trusted_at"`
}

type trustStore struct {
	Trusted []trustRecord `json:"trusted"`
}

// TrustFile is where the trusted configs are recorded:
// $XDG_STATE_HOME/warren/trusted.json, else
// ~/.local/state/warren/trusted.json. A relative XDG_STATE_HOME is
// ignored, as the XDG specification asks.
func TrustFile() (string, error) {
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "warren", "trusted.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no place to record trusted configs: %w (set XDG_STATE_HOME)", err)
	}
	return filepath.Join(home, ".local", "state", "warren", "trusted.json"), nil
}

// Sum is the sha256 of a config's contents, in hex.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// readTrust reads the record; a missing one trusts nothing. A record
// someone else could have written is not believed.
func readTrust() (trustStore, error) {
	var st trustStore
	path, err := TrustFile()
	if err != nil {
		return st, err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if why := writableByOthers(fi); why != "" {
		return st, fmt.Errorf("the record of trusted configs %s is not believed, since %s: remove it and trust your configs again", path, why)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("the record of trusted configs %s is not JSON warren wrote (%v); remove it and trust again", path, err)
	}
	return st, nil
}

// trustState is what the record says of a file's absolute path and sum.
type trustState int

const (
	untrusted trustState = iota
	trusted
	changed // trusted once with other contents
)

func trustOf(abs, sum string) (trustState, error) {
	st, err := readTrust()
	if err != nil {
		return untrusted, err
	}
	for _, r := range st.Trusted {
		if r.Path == abs {
			if r.SHA256 == sum {
				return trusted, nil
			}
			return changed, nil
		}
	}
	return untrusted, nil
}

// recordTrust records abs with sum, replacing an older record of the
// same path. The new record is written beside the old and renamed over
// it, so a reader never sees half of one; it is the user's alone (0600).
func recordTrust(abs, sum string, now time.Time) error {
	st, err := readTrust()
	if err != nil {
		return err
	}
	kept := st.Trusted[:0:0]
	for _, r := range st.Trusted {
		if r.Path != abs {
			kept = append(kept, r)
		}
	}
	st.Trusted = append(kept, trustRecord{Path: abs, SHA256: sum, TrustedAt: now.UTC()})
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path, err := TrustFile()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("recording trust: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "trusted-*.json")
	if err != nil {
		return fmt.Errorf("recording trust: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("recording trust in %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("recording trust in %s: %w", path, err)
	}
	return nil
}

// Trusted is what `warren config trust` recorded.
type Trusted struct {
	Path   string // absolute
	SHA256 string
	// Refused is why warren will still refuse the file when it finds it
	// in the working directory (it chooses where a secret comes from);
	// nil when it will read it.
	Refused error
}

// Trust records path, as it is now, as a config warren may read when it
// finds it in the working directory. The file must load; one that
// chooses where a secret comes from is recorded, and Refused says what
// warren will still refuse in it.
func Trust(path string) (Trusted, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Trusted{}, err
	}
	if own := ownCandidate(); own != "" && abs == own {
		return Trusted{}, fmt.Errorf("%s is your own config: warren reads it without being told to trust it", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Trusted{}, fmt.Errorf("config file %s: %w", path, errors.Unwrap(err))
	}
	f, err := Parse(path, data)
	if err != nil {
		return Trusted{}, fmt.Errorf("%w; nothing was trusted", err)
	}
	sum := Sum(data)
	if err := recordTrust(abs, sum, time.Now()); err != nil {
		return Trusted{}, err
	}
	return Trusted{Path: abs, SHA256: sum, Refused: f.chosenSecrets(data)}, nil
}
