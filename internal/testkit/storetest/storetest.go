// Package storetest opens real Pebble stores (internal/store) for tests:
// in a fresh temporary directory, in memory, or in a directory the test
// names. Pebble's messages are discarded unless the test gives a logger.
// Every store is closed when the test ends, unless the test closed it
// first (a test that cares about Close's error closes the store itself:
// the file systems of crash and fault rigs may fail it on purpose). For
// tests only; safe for concurrent use.
package storetest

import (
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/store"
)

// Open opens a new store on the operating system's file system, in a
// temporary directory of its own.
func Open(t testing.TB) *store.DB {
	t.Helper()
	return OpenDir(t, t.TempDir(), store.Options{})
}

// Mem opens a new store on an in-memory file system.
func Mem(t testing.TB) *store.DB {
	t.Helper()
	return OpenDir(t, "state", store.Options{FS: vfs.NewMem()})
}

// OpenDir opens the store in dir (creating it if need be) with opts; a
// nil Logger discards Pebble's messages. A test that closes the store
// and opens it again calls OpenDir again with the same dir and FS.
func OpenDir(t testing.TB, dir string, opts store.Options) *store.DB {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	db, err := store.Open(dir, opts)
	if err != nil {
		t.Fatalf("store.Open(%q): %v", dir, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
