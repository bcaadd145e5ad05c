package node

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"go.uber.org/goleak"
)

// TestOpenFailureClosesWhatItOpened: an Open that fails once the store,
// the fetcher, the WARC writer and the indexer are open (here: the
// outbox of a partitioned node cannot be opened) closes every one of
// them: no goroutine of theirs is left, and the data directory opens
// again.
func TestOpenFailureClosesWhatItOpened(t *testing.T) {
	ignore := goleak.IgnoreCurrent() // parallel tests paused, not running
	dir := filepath.Join(t.TempDir(), "data")
	broken := errors.New("outbox unreadable")
	openOutbox = func(*store.DB) (*outbox.Outbox, error) { return nil, broken }
	_, err := Open(Options{DataDir: dir, Partitioned: true})
	openOutbox = outbox.Open
	if !errors.Is(err, broken) {
		t.Fatalf("Open with a failing outbox: %v, want its error", err)
	}
	goleak.VerifyNone(t, ignore)
	n, err := Open(Options{DataDir: dir, Partitioned: true})
	if err != nil {
		t.Fatalf("Open after a failed Open: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}
