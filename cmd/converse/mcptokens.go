package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"
)

// tokenFileVersion is the version of the token file's format.
const tokenFileVersion = 1

// tokenFile is the user's file of MCP servers' OAuth tokens,
// os.UserConfigDir()/converse/mcp-tokens.json, mode 0600:
//
//	{"version": 1, "servers": {"https://mcp.example.com/mcp": {
//	  "clientId": "...", "clientSecret": "...", "tokenUrl": "...",
//	  "authStyle": 1, "scopes": ["..."],
//	  "token": {"access_token": "...", "token_type": "Bearer",
//	            "refresh_token": "...", "expiry": "2026-12-04T22:00:00Z"}}}}
//
// A server's URL is its key; authStyle is oauth2.AuthStyle's number.
type tokenFile struct {
	Version int                    `json:"version"`
	Servers map[string]storedGrant `json:"servers"`
}

// storedGrant is a server's tokens and the client that refreshes them.
type storedGrant struct {
	ClientID     string           `json:"clientId"`
	ClientSecret string           `json:"clientSecret,omitempty"` // of a registration that gave one
	TokenURL     string           `json:"tokenUrl"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
}

func grantOf(cfg *oauth2.Config, tok *oauth2.Token) storedGrant {
	return storedGrant{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.Endpoint.TokenURL,
		AuthStyle: cfg.Endpoint.AuthStyle, Scopes: cfg.Scopes, Token: tok}
}

// config is the oauth2 configuration that refreshes g's token.
func (g storedGrant) config() *oauth2.Config {
	return &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
}

// tokenStore reads and writes the token file at path; an empty path keeps
// nothing (there is no user config directory).
type tokenStore struct {
	path string
}

// tokenFileMu serializes the reading and writing of the token file by the
// servers of one process, each a read, a change and a write.
var tokenFileMu sync.Mutex

func userTokenStore() tokenStore {
	dir, err := os.UserConfigDir()
	if err != nil {
		return tokenStore{}
	}
	return tokenStore{path: filepath.Join(dir, "converse", "mcp-tokens.json")}
}

// load is the grant kept for key.
func (s tokenStore) load(key string) (storedGrant, bool) {
	tokenFileMu.Lock()
	defer tokenFileMu.Unlock()
	return s.get(key)
}

// save keeps g for key, beside the other servers' grants, under the lock.
func (s tokenStore) save(key string, g storedGrant) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return s.put(key, g)
}

// lock takes the token file for a read, a change and a write: from the
// other servers of this process (tokenFileMu) and from other converse
// processes (lockTokens), so that none writes back a file read before
// another's save, nor refreshes with a refresh token another has spent.
func (s tokenStore) lock() (unlock func(), err error) {
	tokenFileMu.Lock()
	if s.path == "" {
		return tokenFileMu.Unlock, nil
	}
	var release func()
	err = os.MkdirAll(filepath.Dir(s.path), 0o700)
	if err == nil {
		release, err = lockTokens(s.path)
	}
	if err != nil {
		tokenFileMu.Unlock()
		return nil, err
	}
	return func() { release(); tokenFileMu.Unlock() }, nil
}

// get is load for a holder of the lock.
func (s tokenStore) get(key string) (storedGrant, bool) {
	f, err := s.read()
	if err != nil {
		return storedGrant{}, false
	}
	g, ok := f.Servers[key]
	return g, ok
}

// put is save for a holder of the lock. The file is written anew and
// renamed into place, so a reader never sees half of it.
func (s tokenStore) put(key string, g storedGrant) error {
	if s.path == "" {
		return nil
	}
	f, err := s.read()
	if err != nil {
		f = tokenFile{} // an unreadable file is replaced
	}
	if f.Servers == nil {
		f.Servers = map[string]storedGrant{}
	}
	f.Version, f.Servers[key] = tokenFileVersion, g
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return s.replace(append(data, '\n'))
}

// replace writes data to a new file beside the token file, mode 0600, and
// renames it into place.
func (s tokenStore) replace(data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".mcp-tokens-*.json") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// read reads the token file; a missing one is empty.
func (s tokenStore) read() (tokenFile, error) {
	var f tokenFile
	if s.path == "" {
		return f, nil
	}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, err
	}
	if f.Version != tokenFileVersion {
		return tokenFile{}, errors.New("converse: the MCP token file has an unknown version")
	}
	return f, nil
}
