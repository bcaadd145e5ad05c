package checkpoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// TestStoreVersions: a checkpoint names the store format it was written
// from; a reader refuses another (a fleet member of the previous version
// refuses this one's, and the other way round). A store of the previous
// version, not yet upgraded, can be neither written to a checkpoint nor
// read into.
func TestStoreVersions(t *testing.T) {
	const p = partition.ID(5)
	src := open(t)
	fill(t, src, clustertest.HostsIn(p, 2), "v")
	var buf bytes.Buffer
	if _, _, err := Write(&buf, src, p, time.Now()); err != nil {
		t.Fatal(err)
	}
	if v := binary.BigEndian.Uint32(buf.Bytes()[8:]); v != store.FormatVersion {
		t.Errorf("header's store format %d, want %d", v, store.FormatVersion)
	}
	for _, v := range []uint32{store.PreviousFormatVersion, store.FormatVersion + 1} {
		data := bytes.Clone(buf.Bytes())
		binary.BigEndian.PutUint32(data[8:], v)
		want := fmt.Sprintf("checkpoint: store format %d, this binary reads %d", v, store.FormatVersion)
		if _, _, err := Read(bytes.NewReader(data), open(t), p); err == nil || err.Error() != want {
			t.Errorf("Read of a version %d checkpoint = %v, want %q", v, err, want)
		}
	}

	// An old store: version 3, not upgraded.
	dir := t.TempDir()
	opts := store.Options{Logger: slog.New(slog.DiscardHandler)}
	old := storetest.OpenDir(t, dir, opts)
	b := old.NewBatch()
	b.Set(store.MetaKey("version"), binary.BigEndian.AppendUint32(nil, store.PreviousFormatVersion))
	if err := old.Commit(b); err != nil {
		t.Fatal(err)
	}
	old.Close()
	old = storetest.OpenDir(t, dir, opts)
	if _, _, err := Write(new(bytes.Buffer), old, p, time.Now()); err == nil || !strings.Contains(err.Error(), "not yet upgraded") {
		t.Errorf("Write from an old store = %v, want a refusal", err)
	}
	if _, _, err := Read(bytes.NewReader(buf.Bytes()), old, p); err == nil || !strings.Contains(err.Error(), "read-only until upgraded") {
		t.Errorf("Read into an old store = %v, want a refusal", err)
	}
}
