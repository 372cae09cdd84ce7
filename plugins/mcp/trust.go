package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dshgo/harness/services/sessions"
)

// TrustFileName is the file under the state directory that records which
// project .mcp.json files a person trusted, by content.
const TrustFileName = "mcp-trust.json"

// trustRecord is the trust file: each trusted .mcp.json by absolute path,
// with the SHA-256 of the content that was trusted.
type trustRecord struct {
	Files map[string]trustedFile `json:"files"`
}

type trustedFile struct {
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trustedAt"`
}

// StateDir returns the directory of the trust record: dir when set, else
// $XDG_STATE_HOME/harness (the sessions store's default).
func StateDir(dir string) string {
	if dir != "" {
		return dir
	}
	return sessions.DefaultStateDir(nil)
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func readTrust(stateDir string) (trustRecord, error) {
	rec := trustRecord{Files: map[string]trustedFile{}}
	path := filepath.Join(stateDir, TrustFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", path, err)
	}
	if rec.Files == nil {
		rec.Files = map[string]trustedFile{}
	}
	return rec, nil
}

// trusted reports whether the project file at path, whose content is
// data, was trusted with exactly this content.
func trusted(stateDir, path string, data []byte) (bool, error) {
	rec, err := readTrust(stateDir)
	if err != nil {
		return false, err
	}
	t, ok := rec.Files[path]
	return ok && t.SHA256 == digest(data), nil
}

// TrustProjectFile records that a person trusts the .mcp.json in dir with
// its current content (`harness mcp trust`): the mcp row then starts its
// servers. A later change to the file needs trusting again. It returns the
// file's path and the servers it defines; revoke removes the record.
func TrustProjectFile(stateDir, dir string, revoke bool) (string, map[string]ServerConfig, error) {
	path, err := filepath.Abs(filepath.Join(dir, ProjectFileName))
	if err != nil {
		return "", nil, err
	}
	stateDir = StateDir(stateDir)
	rec, err := readTrust(stateDir)
	if err != nil {
		return path, nil, err
	}
	var servers map[string]ServerConfig
	if revoke {
		delete(rec.Files, path)
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			return path, nil, err
		}
		pf, err := parseProjectFile(path, data)
		if err != nil {
			return path, nil, err
		}
		servers = pf.MCPServers
		rec.Files[path] = trustedFile{SHA256: digest(data), TrustedAt: time.Now().UTC().Truncate(time.Second)}
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return path, nil, err
	}
	out, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return path, nil, err
	}
	tmp, err := os.CreateTemp(stateDir, TrustFileName+".*")
	if err != nil {
		return path, nil, err
	}
	_, werr := tmp.Write(append(out, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return path, nil, err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(stateDir, TrustFileName)); err != nil {
		_ = os.Remove(tmp.Name())
		return path, nil, err
	}
	return path, servers, nil
}
