package schedule

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

var t0 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.Mem(t)
	return db
}

func entry(url string, due time.Duration) Entry {
	return Entry{URL: "http://a.test" + url, Host: "a.test", Due: t0.Add(due), Job: 3, Depth: 2, ShapeRun: 1, Level: 1,
		Interval: 6 * time.Hour, LastFetch: t0.Add(due - 6*time.Hour), Rate: 0.25}
}

func TestRoundTrip(t *testing.T) {
	for _, e := range []Entry{
		entry("/x", 0),
		{URL: "https://b.test/", Host: "b.test", Due: time.Unix(0, 0).UTC()},
		{URL: "http://c.test/?q", Host: "c.test", Due: t0, Job: 1<<32 - 1, Depth: maxField, ShapeRun: maxField, Level: 255,
			Interval: 30 * 24 * time.Hour, LastFetch: t0.Add(-time.Hour), Rate: 1e6, Fed: t0.Add(time.Minute), Learned: true},
		{URL: "http://d.test/", Host: "d.test", Due: t0, Learned: true, Own: 0.5, Stated: 7 * 24 * time.Hour},
		{URL: "http://e.test/", Host: "e.test", Due: t0, Learned: true, Censored: true, Own: 2},
		{URL: "http://e.test/i.png", Host: "e.test", Due: t0, Requisite: 2, Stated: time.Hour},
		{URL: "http://e.test/j.png", Host: "e.test", Due: t0, Requisite: 1},
	} {
		got, err := Decode(e.Key(), e.Value())
		if err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("Decode(Encode(%+v)) = %+v, %v", e, got, err)
		}
	}
}

// An entry written before the flags byte existed reads as not Learned,
// one written before the own rate (or with one that is not a rate) as
// without one; bytes after the own rate (fields added later) are ignored.
func TestOlderAndNewerValues(t *testing.T) {
	e := entry("/x", 0)
	e.Learned, e.Own = true, 0.5
	v := e.Value()
	old, err := Decode(e.Key(), v[:len(v)-5])
	if want := e; err != nil || old.Learned || func() bool { want.Learned, want.Own = false, 0; return !reflect.DeepEqual(old, want) }() {
		t.Errorf("without the flags byte: %+v, %v; want %+v not Learned", old, err, e)
	}
	noOwn, err := Decode(e.Key(), v[:len(v)-4])
	if want := e; err != nil || func() bool { want.Own = 0; return !reflect.DeepEqual(noOwn, want) }() {
		t.Errorf("without the own rate: %+v, %v; want %+v without it", noOwn, err, e)
	}
	// A negative own rate is unknown (0), the entry kept.
	badOwn, err := Decode(e.Key(), append(v[:len(v)-4:len(v)-4], 0xBF, 0x80, 0, 0))
	if want := e; err != nil || func() bool { want.Own = 0; return !reflect.DeepEqual(badOwn, want) }() {
		t.Errorf("a negative own rate: %+v, %v; want %+v without it", badOwn, err, e)
	}
	e.Stated = time.Hour
	v = e.Value()
	newer, err := Decode(e.Key(), append(v, 0xAA, 0x55))
	if err != nil || !reflect.DeepEqual(newer, e) {
		t.Errorf("with bytes after the stated interval: %+v, %v; want %+v", newer, err, e)
	}
	// A stated interval past its bound, or cut, makes the entry malformed.
	for _, tail := range [][]byte{{0x80}, {0xFF, 0xFF, 0xFF, 0xFF, 0x0F}} {
		if _, err := Decode(e.Key(), append(v[:len(v)-2:len(v)-2], tail...)); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "stated interval") {
			t.Errorf("stated bytes %x: %v, want ErrMalformed naming the stated interval", tail, err)
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	e := entry("/x", 0)
	v := e.Value()
	for _, c := range []struct {
		name       string
		key, value []byte
		want       string
	}{
		{"not a due key", store.URLKey("a.test", e.URL), v, "url"},
		{"bad key", []byte("w\x00"), v, "malformed key"},
		{"empty value", e.Key(), nil, "version"},
		{"version", e.Key(), append([]byte{9}, v[1:]...), "version"},
		{"cut", e.Key(), v[:len(v)-8], "rate"},
		{"negative rate", e.Key(), append(v[:len(v)-10:len(v)-10], 0xBF, 0x80, 0, 0, 0, 0, 0, 0, 0, 0), "rate"},
		{"depth too deep", e.Key(), []byte{1, 3, 0xFF, 0xFF, 0xFF, 0x0F}, "depth"},
	} {
		_, err := Decode(c.key, c.value)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Decode error = %v, want one naming %q", c.name, err, c.want)
		}
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, store.ErrMalformedKey) {
			t.Errorf("%s: Decode error %v wraps neither ErrMalformed nor store.ErrMalformedKey", c.name, err)
		}
	}
}

// TestDue writes entries around now and reads back the due ones, in due
// order, from their partition only.
func TestDue(t *testing.T) {
	db := openDB(t)
	b := db.NewBatch()
	es := []Entry{entry("/late", -time.Hour), entry("/now", 0), entry("/soon", time.Second), entry("/later", time.Hour), entry("/old", -48*time.Hour)}
	other := Entry{URL: "http://zz.test/", Host: "zz.test", Due: t0.Add(-time.Hour)}
	if partition.Of(other.Host) == partition.Of("a.test") {
		t.Fatal("test hosts share a partition")
	}
	for _, e := range append(es, other) {
		if err := Put(b, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := Due(db, partition.Of("a.test"), t0, func(e Entry) bool { got = append(got, e.URL); return true }, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"http://a.test/old", "http://a.test/late", "http://a.test/now"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Due(now) = %q, want %q", got, want)
	}
	got = got[:0]
	if err := Due(db, partition.Of("a.test"), t0, func(e Entry) bool { got = append(got, e.URL); return len(got) < 2 }, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("Due stopped by fn after %d entries, want 2", len(got))
	}

	// Rescheduling: delete the old key, put the new, in one batch.
	b = db.NewBatch()
	old := es[0]
	if err := Delete(b, old.Due, old.Host, old.URL); err != nil {
		t.Fatal(err)
	}
	old.Due = t0.Add(2 * time.Hour)
	if err := Put(b, old); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	n := 0
	var urls []string
	if err := All(db, partition.Of("a.test"), func(e Entry) bool { n++; urls = append(urls, e.URL); return true }, nil); err != nil {
		t.Fatal(err)
	}
	if n != len(es) || urls[len(urls)-1] != "http://a.test/late" {
		t.Errorf("All after rescheduling = %q, want %d entries with /late last", urls, len(es))
	}
}

// TestBadEntrySkipped: an entry that does not decode is reported and the
// scan goes on.
func TestBadEntrySkipped(t *testing.T) {
	db := openDB(t)
	b := db.NewBatch()
	good := entry("/good", 0)
	if err := Put(b, good); err != nil {
		t.Fatal(err)
	}
	badKey := entry("/bad", -time.Minute).Key()
	if err := b.Set(badKey, []byte{7}); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	var got []string
	var bad []error
	err := Due(db, partition.Of("a.test"), t0, func(e Entry) bool { got = append(got, e.URL); return true },
		func(k []byte, err error) { bad = append(bad, err) })
	if err != nil || len(got) != 1 || len(bad) != 1 || !errors.Is(bad[0], ErrMalformed) {
		t.Errorf("Due = %q, bad %v, err %v; want the good entry and one ErrMalformed", got, bad, err)
	}
}

func FuzzDecode(f *testing.F) {
	e := entry("/x", 0)
	f.Add(e.Key(), e.Value())
	f.Add(e.Key(), []byte{1})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		e, err := Decode(key, value)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, store.ErrMalformedKey) {
				t.Fatalf("Decode error %v wraps neither sentinel", err)
			}
			return
		}
		e2, err := Decode(e.Key(), e.Value())
		if err != nil || !reflect.DeepEqual(e, e2) {
			t.Fatalf("Decode(Encode(%+v)) = %+v, %v", e, e2, err)
		}
	})
}
