package dedup

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"github.com/trawl-crawler/trawl/simhash"
)

func memDB(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.Mem(t)
	return db
}

func commit(t *testing.T, db *store.DB, fill func(*store.Batch) error) {
	t.Helper()
	b := db.NewBatch()
	if err := fill(b); err != nil {
		b.Close()
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

func TestExact(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("<html>same</html>"))
	if _, ok, err := x.Exact(sum); ok || err != nil {
		t.Fatalf("Exact before any add: %v, %v", ok, err)
	}
	o := Original{URL: "http://a.test/x", Date: time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC), File: "trawl-1.warc.gz", Offset: 12345, RecordID: "<urn:uuid:1>", Job: 7}
	commit(t, db, func(b *store.Batch) error { return x.AddExact(b, sum, o) })
	got, ok, err := x.Exact(sum)
	if err != nil || !ok || got != o {
		t.Fatalf("Exact = %+v, %v, %v; want %+v", got, ok, err, o)
	}
	if _, ok, _ := x.Exact(sha256.Sum256([]byte("other"))); ok {
		t.Error("Exact found another digest")
	}
}

func TestOriginalDecodeRejects(t *testing.T) {
	good := Original{URL: "http://a.test/", File: "f", Offset: 1}.Encode()
	for name, b := range map[string][]byte{
		"empty": nil, "version": {2}, "cut": good[:len(good)-1], "trailing": append(append([]byte{}, good...), 0),
	} {
		if _, err := DecodeOriginal(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzDecodeOriginal(f *testing.F) {
	f.Add(Original{URL: "http://a.test/", Date: time.Unix(1, 2), File: "f.warc.gz", Offset: 99}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeOriginal(b)
		if err != nil {
			return
		}
		back, err := DecodeOriginal(o.Encode())
		if err != nil || back != o {
			t.Fatalf("re-encoding %+v: %+v, %v", o, back, err)
		}
	})
}

// words returns n made-up words from seed.
func words(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", min(r.IntN(3000), r.IntN(3000)))
	}
	return out
}

// printOf is the print of a page with the given title and words.
func printOf(title string, ws []string) simhash.Print {
	doc := "<title>" + title + "</title><p>" + strings.Join(ws, " ") + "</p>"
	return simhash.HTMLContent([]byte(doc)).Print(nil)
}

// edit returns ws with n of its words replaced.
func edit(ws []string, n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 2))
	out := append([]string(nil), ws...)
	for _, i := range r.Perm(len(ws))[:n] {
		out[i] = fmt.Sprintf("new%d", r.IntN(1e6))
	}
	return out
}

// findable is what Near promises of a stored print s for a query q: it is
// read if one of q's probes holds its band and it is within
// MaxCandidateDistance; it then counts at its resemblance if its title is
// q's or it resembles q at RetitledResemblance.
func findable(q, s simhash.Print, minRes float64) (float64, bool) {
	if bits.OnesCount64(q.FP^s.FP) > MaxCandidateDistance {
		return 0, false
	}
	read := false
	for _, pr := range Probes(q) {
		read = read || simhash.Band(s.FP, pr.Band) == pr.Value
	}
	r := simhash.Resemblance(q.Sketch, s.Sketch)
	retitledOK := r >= RetitledResemblance && q.Sketch.Filled() >= RetitledFilled && s.Sketch.Filled() >= RetitledFilled
	if !read || r < minRes || q.Title != s.Title && !retitledOK {
		return 0, false
	}
	return r, true
}

// TestNear: against a linear scan over the same prints, the store's index
// finds the stored page that resembles a query most, under the rules of
// findable, or reports none when the scan finds none; copies of stored
// pages with a few words changed are found.
func TestNear(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	type page struct {
		url   string
		title string
		words []string
		print simhash.Print
	}
	var stored []page
	commit(t, db, func(b *store.Batch) error {
		for i := range 150 {
			p := page{url: fmt.Sprintf("http://h%d.test/%d", i%7, i), title: fmt.Sprint("page ", i%50), words: words(uint64(i), 200+i%300)}
			if i%10 == 9 { // a near copy of the page before
				p.words = edit(stored[i-1].words, 3, uint64(i))
				p.title = stored[i-1].title
			}
			p.print = printOf(p.title, p.words)
			stored = append(stored, p)
			if err := x.AddNear(b, p.print, p.url, uint32(1+i%3)); err != nil {
				return err
			}
		}
		return nil
	})
	found := 0
	for i := range 300 {
		o := stored[i%len(stored)]
		title := o.title
		if i%5 == 4 {
			title = "another title"
		}
		q := printOf(title, edit(o.words, i%15, uint64(1000+i)))
		minRes := 0.5 + float64(i%5)/10
		best := -1.0
		for _, s := range stored {
			if r, ok := findable(q, s.print, minRes); ok && r > best {
				best = r
			}
		}
		m, ok, err := x.Near(q, minRes)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (best >= 0) || ok && m.Resemblance != best {
			t.Fatalf("query %d: Near = %+v, %v; a scan finds the best at %.3f", i, m, ok, best)
		}
		if !ok {
			continue
		}
		found++
		k := slices.IndexFunc(stored, func(p page) bool { return p.url == m.URL })
		if k < 0 || simhash.Resemblance(q.Sketch, stored[k].print.Sketch) != m.Resemblance {
			t.Fatalf("query %d: Near = %+v: not a stored page at that resemblance", i, m)
		}
		if want := uint32(1 + k%3); m.Job != want {
			t.Fatalf("query %d: match's job %d, want %d", i, m.Job, want)
		}
	}
	if found < 150 {
		t.Errorf("%d of 300 queries found a page, want most (the test finds too little to say much)", found)
	}
	// A copy with 1% of 300 words changed, same title, is found.
	o := stored[20]
	if m, ok, err := x.Near(printOf(o.title, edit(o.words, len(o.words)/100, 5)), 0.75); err != nil || !ok || m.URL != o.url {
		t.Errorf("Near(a 1%% edit of %s) = %+v, %v, %v", o.url, m, ok, err)
	}
}

// TestNearOldEntries: an entry of the format before sketches (job, weak
// bits, URL) is not read as a match, and does not fail a lookup.
func TestNearOldEntries(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	p := printOf("t", words(1, 300))
	commit(t, db, func(b *store.Batch) error {
		old := binary.AppendUvarint(nil, 7)
		old = binary.BigEndian.AppendUint64(old, 0xff)
		old = append(old, "http://old.test/"...)
		for band := range simhash.NumBands {
			x.occupy(band, simhash.Band(p.FP, band))
			if err := b.Set(store.NearKey(p.FP, band), old); err != nil {
				return err
			}
		}
		return nil
	})
	if m, ok, err := x.Near(p, 0.5); err != nil || ok {
		t.Fatalf("Near over an old-format entry = %+v, %v, %v; want none, no error", m, ok, err)
	}
}

// TestNearBandsLoaded: an index opened on a store that holds prints knows
// their band values (New reads them) and finds them; its in-memory bands
// are exactly those of the index that added them.
func TestNearBandsLoaded(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	var stored []simhash.Print
	commit(t, db, func(b *store.Batch) error {
		for i := range 300 {
			p := printOf(fmt.Sprint(i), words(uint64(i), 100))
			if i == 0 {
				p.FP = 0 // the lowest band values
			}
			if i == 1 {
				p.FP = 1<<64 - 1 // the highest
			}
			stored = append(stored, p)
			if err := x.AddNear(b, p, fmt.Sprintf("http://h%d.test/", i), 1); err != nil {
				return err
			}
		}
		return nil
	})
	y, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	if x.occupied != y.occupied {
		t.Fatal("an index opened on the store holds other band values than the one that stored them")
	}
	for i, p := range stored {
		q := p
		q.FP ^= 1
		m, ok, err := y.Near(q, 0.99)
		if err != nil || !ok || m.URL != fmt.Sprintf("http://h%d.test/", i) {
			t.Fatalf("Near(stored print %d, one bit off) = %+v, %v, %v", i, m, ok, err)
		}
	}
}

// TestNearSharded: an index split by partition (keys copied into a shard's
// store by partition) answers, probe by probe (NearProbes, each probe asked
// of its value's partition), what one whole index does; keys copied into
// a store other than by AddNear are found once their partition is loaded
// (LoadPartition).
func TestNearSharded(t *testing.T) {
	whole, err := New(memDB(t))
	if err != nil {
		t.Fatal(err)
	}
	shardDB := memDB(t)
	shard, err := New(shardDB) // made before the keys are copied in
	if err != nil {
		t.Fatal(err)
	}
	var stored [][]string
	commit(t, whole.db, func(b *store.Batch) error {
		for i := range 200 {
			ws := words(uint64(i), 150)
			stored = append(stored, ws)
			if err := whole.AddNear(b, printOf("t", ws), fmt.Sprintf("http://h%d.test/", i), 1); err != nil {
				return err
			}
		}
		return nil
	})
	// Copy every fingerprint key into the shard's store, by partition.
	it, err := whole.db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, shardDB, func(b *store.Batch) error {
		for part := range partition.Count {
			for _, r := range store.FingerprintRanges(partition.ID(part)) {
				for ok := it.SeekGE(r.Start); ok && bytes.Compare(it.Key(), r.End) < 0; ok = it.Next() {
					if err := b.Set(it.Key(), it.Value()); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	it.Close()
	found := 0
	for i, ws := range stored {
		q := printOf("t", edit(ws, 2, uint64(i)))
		want, ok, err := whole.Near(q, 0.5)
		if err != nil {
			t.Fatalf("whole Near(print %d): %v", i, err)
		}
		if ok {
			found++
		}
		byPart := map[partition.ID][]Probe{}
		for _, pr := range Probes(q) {
			part := partition.OfFingerprint(pr.Value)
			byPart[part] = append(byPart[part], pr)
		}
		best := Match{Resemblance: -1}
		for part, probes := range byPart {
			if i == 0 { // before LoadPartition, the copied keys are not seen
				if _, ok, _ := shard.NearProbes(q, probes, 0.5); ok {
					t.Fatalf("NearProbes before LoadPartition(%d) found a match", part)
				}
			}
			if err := shard.LoadPartition(part); err != nil {
				t.Fatal(err)
			}
			m, ok, err := shard.NearProbes(q, probes, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			if ok && m.Resemblance > best.Resemblance {
				best = m
			}
		}
		if !ok {
			want = Match{Resemblance: -1}
		}
		if best != want {
			t.Errorf("print %d: shards' best %+v, whole index's %+v", i, best, want)
		}
	}
	if found < len(stored)*9/10 {
		t.Errorf("the whole index found %d of %d copies with 2 words of 150 changed, want 90%%", found, len(stored))
	}
}

// TestProbes: a lookup reads each band as it is and with every subset of
// its weak bits flipped, each value once.
func TestProbes(t *testing.T) {
	p := simhash.Print{FP: 0x1234_5678_9abc_def0, Probe: 0b111 | 0b1011<<16 | 1<<63}
	probes := Probes(p)
	seen := map[Probe]bool{}
	for _, pr := range probes {
		if seen[pr] {
			t.Errorf("probe %+v twice", pr)
		}
		seen[pr] = true
		if diff := pr.Value ^ simhash.Band(p.FP, pr.Band); diff&^simhash.Band(p.Probe, pr.Band) != 0 {
			t.Errorf("probe %+v flips bits outside the band's weak bits", pr)
		}
	}
	// Band 0: 3 weak bits, 8 values; band 1: 3 (of 0b1011), 8; band 2:
	// none, 1; band 3: one, 2.
	if len(probes) != 8+8+1+2 {
		t.Errorf("%d probes, want 19", len(probes))
	}
	for i := range simhash.NumBands {
		if probes[i] != (Probe{Band: i, Value: simhash.Band(p.FP, i)}) {
			t.Errorf("probe %d = %+v, want band %d as it is first", i, probes[i], i)
		}
	}
}

// TestRecent: of copies of one page judged at once, every one but the
// first finds a page judged before it; distinct pages find none; the
// ring keeps the last RecentPrints.
func TestRecent(t *testing.T) {
	var x Recent
	base := words(1, 300)
	const copies = 16
	found := make(chan bool, copies)
	for i := range copies {
		go func() {
			q := printOf("t", edit(base, 2, uint64(i)))
			_, ok := x.CheckAndAdd(q, fmt.Sprintf("http://a.test/%d", i), 1, 0.75)
			found <- ok
		}()
	}
	n := 0
	for range copies {
		if <-found {
			n++
		}
	}
	if n != copies-1 {
		t.Errorf("%d of %d copies judged at once found an earlier one, want all but the first", n, copies)
	}
	p := printOf("t", base)
	if _, ok := x.CheckAndAdd(p, "http://a.test/orig", 1, 0.75); !ok {
		t.Error("the page itself, at another URL than its copies, found none")
	}
	for i := range RecentPrints {
		q := printOf(fmt.Sprint("other ", i), words(uint64(100+i), 50))
		if m, ok := x.CheckAndAdd(q, fmt.Sprintf("http://b.test/%d", i), 2, 0.75); ok {
			t.Fatalf("distinct page %d found %+v", i, m)
		}
	}
	if m, ok := x.CheckAndAdd(p, "http://c.test/", 1, 0.75); ok {
		t.Errorf("after %d other pages, a copy of the first still found %+v: the ring keeps too much", RecentPrints, m)
	}
}

// TestCompare: pages of one title are compared by resemblance alone;
// pages of two titles only when their text is all but the same and long
// enough to tell; fingerprints far apart never.
func TestCompare(t *testing.T) {
	long := words(7, 400)
	short := words(8, 20)
	for _, c := range []struct {
		name string
		p, s simhash.Print
		ok   bool
	}{
		{"same title, 1% edited", printOf("a", long), printOf("a", edit(long, 4, 1)), true},
		{"two titles, same long text", printOf("a", long), printOf("b", long), true},
		{"two titles, 1% edited", printOf("a", long), printOf("b", edit(long, 4, 1)), false},
		{"two titles, same short text", printOf("a", short), printOf("b", short), false},
		{"same title, same short text", printOf("a", short), printOf("a", short), true},
		{"a site's title, two headings", shared(printOfH("site", "class a", long)), printOfH("site", "class b", edit(long, 4, 1)), false},
		{"a site's title, one heading", shared(printOfH("site", "class a", long)), printOfH("site", "class a", edit(long, 4, 1)), true},
		{"a site's title, no heading", shared(printOf("site", long)), printOf("site", edit(long, 4, 1)), false},
		{"a page's own title, two headings", printOfH("site", "class a", long), printOfH("site", "class b", edit(long, 4, 1)), true},
		{"fingerprints far apart", printOf("a", long), func() simhash.Print { p := printOf("a", long); p.FP = ^p.FP; return p }(), false},
	} {
		if _, ok := Compare(c.p, c.s); ok != c.ok {
			t.Errorf("%s: Compare = %v, want %v", c.name, ok, c.ok)
		}
	}
}

// printOfH is printOf with a first heading.
func printOfH(title, heading string, ws []string) simhash.Print {
	doc := "<title>" + title + "</title><h1>" + heading + "</h1><p>" + strings.Join(ws, " ") + "</p>"
	return simhash.HTMLContent([]byte(doc)).Print(nil)
}

// shared marks p's title as its site's (simhash.Content.PrintWith).
func shared(p simhash.Print) simhash.Print {
	p.SharedTitle = true
	return p
}

// BenchmarkRecent: a lookup of a page unlike the RecentPrints kept (the
// common case of a crawl), each kept under a URL as long as its own.
func BenchmarkRecent(b *testing.B) {
	const n = 2 * RecentPrints
	prints := make([]simhash.Print, n)
	urls := make([]string, n)
	for i := range prints {
		prints[i] = printOf(fmt.Sprint("page ", i), words(uint64(1000+i), 50))
		urls[i] = fmt.Sprintf("http://h%04d.bench.test/p/%06d", i%200, i)
	}
	var x Recent
	for i := range RecentPrints {
		x.CheckAndAdd(prints[i], urls[i], 1, 0.75)
	}
	b.ResetTimer()
	for i := range b.N {
		k := (RecentPrints + i) % n
		x.CheckAndAdd(prints[k], urls[k], 1, 0.75)
	}
}

// TestNearSingleSameAnswers: an index that added its prints itself, and so
// knows which band values hold one fingerprint and passes over those too
// far without reading them, answers every lookup as an index opened on the
// same store, which reads every occupied value: on prints spread over the
// band values, and on crowded ones where a lookup's scan budget
// (MaxLookupScan) runs out.
func TestNearSingleSameAnswers(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	crowd := func(fp uint64) uint64 { // every band one of 4 values
		for band := range simhash.NumBands {
			shift := 16 * band
			fp = fp&^(0xffff<<shift) | uint64(r.IntN(4))<<shift
		}
		return fp
	}
	var stored []simhash.Print
	commit(t, db, func(b *store.Batch) error {
		for i := range 3000 {
			p := printOf(fmt.Sprint(i%50), words(uint64(i), 120))
			if i%3 == 0 {
				p.FP = crowd(r.Uint64())
			}
			if i%7 == 0 && i > 0 {
				p.FP = stored[i-1].FP // one fingerprint stored twice: still one
			}
			stored = append(stored, p)
			if err := x.AddNear(b, p, fmt.Sprintf("http://h%d.test/", i), 1); err != nil {
				return err
			}
		}
		return nil
	})
	singles := 0
	for band := range simhash.NumBands {
		for v := range 1 << 16 {
			if x.isOccupied(band, uint16(v)) && x.multi[band][v/64].Load()&(1<<(v%64)) == 0 {
				singles++
			}
		}
	}
	if singles == 0 {
		t.Fatal("no band value holds a single fingerprint: the test does not test the summary")
	}
	y, err := New(db) // reads every occupied value
	if err != nil {
		t.Fatal(err)
	}
	var queries []simhash.Print
	for i, p := range stored[:600] {
		q := p
		q.FP ^= 1 << (i % 64)
		queries = append(queries, q, printOf(fmt.Sprint(i%50), edit(words(uint64(i), 120), 3, uint64(i))))
		q.FP = crowd(r.Uint64())
		queries = append(queries, q)
		q.FP = r.Uint64()
		queries = append(queries, q)
	}
	found := 0
	for i, q := range queries {
		mx, okx, errx := x.Near(q, 0.5)
		my, oky, erry := y.Near(q, 0.5)
		if errx != nil || erry != nil || okx != oky || mx != my {
			t.Fatalf("query %d: Near = %+v, %v, %v with the summary; %+v, %v, %v reading every value", i, mx, okx, errx, my, oky, erry)
		}
		if okx {
			found++
		}
	}
	if found < len(queries)/4 {
		t.Errorf("%d of %d queries found a page: too few to compare answers", found, len(queries))
	}
}

// TestNearSingleCountsScanned: a band value passed over for its one far
// fingerprint counts against the lookup's scan budget as reading it
// would: with one such value first and seven crowded ones after it, the
// ninth probe has 15 reads left, not 16, and its sixteenth entry (a near
// copy) is not read, by this index or by one that reads every value.
func TestNearSingleCountsScanned(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	q := printOf("t", words(1, 200))
	q.FP, q.Probe = 0, 0x0003_0003_0003_0003 // probes: each band 0, then 1 and 2, then 3
	at := func(band int, v, others uint16) uint64 {
		var fp uint64
		for b := range simhash.NumBands {
			w := others
			if b == band {
				w = v
			}
			fp |= uint64(w) << (16 * b)
		}
		return fp
	}
	add := func(b *store.Batch, fp uint64, url string) error {
		p := q
		p.FP = fp
		return x.AddNear(b, p, url, 1)
	}
	const target = 0xffff_0001_0100_0100 // band 2 holds 1; 19 bits from q
	commit(t, db, func(b *store.Batch) error {
		if err := add(b, 0xffff_ffff_ffff_0000, "http://single.test/"); err != nil { // band 0 value 0, alone
			return err
		}
		crowded := []Probe{{1, 0}, {2, 0}, {3, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 1}}
		for _, pr := range crowded {
			n := 16
			if pr == (Probe{2, 1}) {
				n = 15 // and the target, after them
			}
			for j := range n {
				if err := add(b, at(pr.Band, pr.Value, 0xfff0|uint16(j)), fmt.Sprintf("http://far%d-%d-%d.test/", pr.Band, pr.Value, j)); err != nil {
					return err
				}
			}
		}
		return add(b, target, "http://target.test/")
	})
	if x.isOccupied(0, 0) && x.multi[0][0].Load()&1 != 0 {
		t.Fatal("band 0 value 0 holds more than one fingerprint: the test does not test the summary")
	}
	y, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	for name, ix := range map[string]*Index{"summary": x, "reading every value": y} {
		if m, ok, err := ix.Near(q, 0.5); err != nil || ok {
			t.Errorf("%s: Near = %+v, %v, %v; want none (the target lies past the scan budget)", name, m, ok, err)
		}
	}
	// Looked up by its own fingerprint, the target is read at the first probe.
	q2 := q
	q2.FP = target
	if m, ok, err := x.Near(q2, 0.5); err != nil || !ok || m.URL != "http://target.test/" {
		t.Errorf("Near(the target itself) = %+v, %v, %v", m, ok, err)
	}
}

// BenchmarkNearLookup looks up pages unlike any of 20,000 stored ones
// (about a quarter of each band's values occupied, as in a crawl of
// 2,000 hosts), with the index that added them, which passes over values
// holding one far fingerprint without a store read, and with one opened
// on the store, which reads every occupied value.
func BenchmarkNearLookup(b *testing.B) {
	db := storetest.Mem(b)
	x, err := New(db)
	if err != nil {
		b.Fatal(err)
	}
	base := printOf("t", words(1, 300))
	r := rand.New(rand.NewPCG(1, 2))
	batch := db.NewBatch()
	for i := range 20000 {
		p := base
		p.FP = r.Uint64()
		if err := x.AddNear(batch, p, fmt.Sprintf("http://h%d.test/p%d", i%2000, i), 1); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Commit(batch); err != nil {
		b.Fatal(err)
	}
	y, err := New(db)
	if err != nil {
		b.Fatal(err)
	}
	queries := make([]simhash.Print, 1024)
	for i := range queries {
		queries[i] = printOf(fmt.Sprint(i), words(uint64(i)+100, 300))
	}
	for name, ix := range map[string]*Index{"added": x, "reopened": y} {
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, _, err := ix.Near(queries[i%len(queries)], 0.75); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
