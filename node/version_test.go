package node

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// TestOpenStateUpgradesVersion3: OpenState opens a store of the previous
// format version and upgrades it before anything writes: here one at
// version 3 whose counters are already per partition (converted by a
// binary of this session before the version bump), so the upgrade only
// marks it 4 and the job's counts are kept.
func TestOpenStateUpgradesVersion3(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	writeOldStore(t, dir, []frontier.Item{
		{URL: "http://a.test/1", Host: "a.test", Job: 1},
		{URL: "http://b.test/1", Host: "b.test", Job: 1},
	}, nil)
	st, err := OpenState(StateOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v := st.DB.Version(); v != store.FormatVersion {
		t.Errorf("version %d after OpenState, want %d", v, store.FormatVersion)
	}
	if j := st.Frontier.Job(1); j.Queued != 2 {
		t.Errorf("job 1 after the upgrade: %+v, want 2 queued", j)
	}
	if err := <-st.Frontier.Add(nil, frontier.Item{URL: "http://c.test/1", Host: "c.test", Job: 1}); err != nil {
		t.Errorf("add to the upgraded store: %v", err)
	}
}

// TestFailedOpenLeavesOldStore: an OpenState that fails (the seen gate
// refuses a malformed seen key) leaves a store of the previous format
// version as it was: the frontier's load, which upgrades it in place,
// runs only once the filters loaded (else the binary that wrote it could
// no longer open it).
func TestFailedOpenLeavesOldStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	malformed := []byte{byte(store.KindSeen), 0, 1, 'x'} // no NUL after the partition
	writeOldStore(t, dir, []frontier.Item{{URL: "http://a.test/1", Host: "a.test", Job: 1}}, malformed)
	if st, err := OpenState(StateOptions{Dir: dir}); err == nil {
		st.Close()
		t.Fatal("OpenState succeeded on a malformed seen key")
	}
	db := storetest.OpenDir(t, dir, store.Options{})
	defer db.Close()
	if v := db.Version(); v != store.PreviousFormatVersion {
		t.Errorf("after a failed OpenState the store is at version %d, want it left at %d", v, store.PreviousFormatVersion)
	}
}

// writeOldStore writes a store in dir holding items, marked as of the
// previous format version, with extraKey (if any) set.
func writeOldStore(t *testing.T, dir string, items []frontier.Item, extraKey []byte) {
	t.Helper()
	st, err := OpenState(StateOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-st.Frontier.Add(nil, items...); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := storetest.OpenDir(t, dir, store.Options{})
	b := db.NewBatch()
	b.Set(store.MetaKey("version"), binary.BigEndian.AppendUint32(nil, store.PreviousFormatVersion))
	if extraKey != nil {
		b.Set(extraKey, nil)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
