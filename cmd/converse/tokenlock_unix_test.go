//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

// TestMCPTokenSaveWaitsForAnotherProcess: a save waits while another
// converse process holds the token file's lock, between its read and its
// write, and then keeps that process's grant beside its own. Without the
// lock the other process's write, of the file it read before, would drop
// this save's grant.
func TestMCPTokenSaveWaitsForAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-tokens.json")
	grant := func(id string) storedGrant {
		return storedGrant{ClientID: id, TokenURL: "https://as.example.com/token", Token: &oauth2.Token{AccessToken: id}}
	}
	unlock, err := lockTokens(path) // the other process's lock: flock(2) locks an open file, not a process
	require.NoError(t, err)

	saved := make(chan error, 1)
	go func() { saved <- tokenStore{path: path}.save("https://b.example.com/mcp", grant("b")) }()
	select {
	case err := <-saved:
		unlock()
		t.Fatalf("the save did not wait for the lock (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	// The other process writes the file it read before the save began.
	require.NoError(t, tokenStore{path: path}.replace([]byte(`{"version": 1, "servers": {"https://a.example.com/mcp": {"clientId": "a", "tokenUrl": "https://as.example.com/token", "token": {"access_token": "a"}}}}`)))
	unlock()
	require.NoError(t, <-saved)

	for _, key := range []string{"https://a.example.com/mcp", "https://b.example.com/mcp"} {
		g, ok := tokenStore{path: path}.load(key)
		assert.True(t, ok, "the grant of %s was lost", key)
		assert.Equal(t, key[8:9], g.ClientID)
	}
	info, err := os.Stat(path + ".lock")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

// TestMCPRefreshWaitsForAnotherProcess: a refresh while another converse
// process holds the token file's lock waits for it, then goes on from the
// tokens that process saved, not from the refresh token it spent.
func TestMCPRefreshWaitsForAnotherProcess(t *testing.T) {
	as, store, cfg, sources := sharedTokens(t)
	unlock, err := lockTokens(store.path) // the other process, refreshing
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() { _, err := sources[0].Token(); got <- err }()
	select {
	case err := <-got:
		unlock()
		t.Fatalf("the refresh did not wait for the lock (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	g, _ := store.get(as.URL)
	theirs, err := cfg.TokenSource(t.Context(), &oauth2.Token{RefreshToken: g.Token.RefreshToken}).Token()
	require.NoError(t, err)
	require.NoError(t, store.put(as.URL, grantOf(cfg, theirs)))
	unlock()
	require.NoError(t, <-got, "the refresh went on from the other process's refresh token")
	assert.Equal(t, 2, as.Count("refresh_token"))
}
