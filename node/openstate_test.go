package node

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// TestFailedOpenLeavesOldStore: an OpenState that fails (the seen gate
// refuses a malformed seen key) leaves a store of the previous format
// version as it was: the frontier's load, which upgrades it in place,
// runs only once the filters loaded (else the binary that wrote it could
// no longer open it).
func TestFailedOpenLeavesOldStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	st, err := OpenState(StateOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-st.Frontier.Add(nil, frontier.Item{URL: "http://a.test/1", Host: "a.test", Job: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := storetest.OpenDir(t, dir, store.Options{})
	b := db.NewBatch()
	b.Set(store.MetaKey("version"), binary.BigEndian.AppendUint32(nil, store.PreviousFormatVersion))
	b.Set([]byte{byte(store.KindSeen), 0, 1, 'x'}, nil) // malformed: no NUL after the partition
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if st, err := OpenState(StateOptions{Dir: dir}); err == nil {
		st.Close()
		t.Fatal("OpenState succeeded on a malformed seen key")
	} else {
		t.Logf("OpenState: %v", err)
	}
	db = storetest.OpenDir(t, dir, store.Options{})
	defer db.Close()
	if v := db.Version(); v != store.PreviousFormatVersion {
		t.Errorf("after a failed OpenState the store is at version %d, want it left at %d", v, store.PreviousFormatVersion)
	}
}
