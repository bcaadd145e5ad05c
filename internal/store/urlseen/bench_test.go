package urlseen

import (
	"fmt"
	"testing"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

const benchBatch = 100

func benchURLs(prefix string, n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://%s%d.example.com/articles/2024/page-%d.html", prefix, i%1000, i)
	}
	return urls
}

// benchDurable opens a store on the real file system, as a crawl does.
func benchDurable(b *testing.B) (*store.DB, *Durable) {
	db := storetest.OpenDir(b, b.TempDir(), store.Options{Logger: quiet})
	d, err := NewDurable(db, DurableOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return db, d
}

// BenchmarkDurableNew: new URLs in batches of 100, each batch committed
// without sync (as its keys would be, with the frontier's queue items).
// "check" stops at AddBatch (the seen check and staging); "commit" also
// commits the batch to Pebble.
func BenchmarkDurableNew(b *testing.B) {
	for _, commit := range []bool{false, true} {
		name := map[bool]string{false: "check", true: "commit"}[commit]
		b.Run(name, func(b *testing.B) {
			db, d := benchDurable(b)
			defer db.Close()
			urls := benchURLs("n", b.N+benchBatch)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += benchBatch {
				bt := db.NewBatch()
				if _, err := d.AddBatch(bt, 0, urls[i:i+benchBatch]); err != nil {
					b.Fatal(err)
				}
				if commit {
					if err := db.CommitNoSync(bt); err != nil {
						b.Fatal(err)
					}
				} else {
					bt.Close()
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
		})
	}
}

// BenchmarkDurableKnown: URLs already in the store (1,000,000 of them, so
// the filter says "maybe" and Pebble is read), in batches of 100.
func BenchmarkDurableKnown(b *testing.B) {
	db, d := benchDurable(b)
	defer db.Close()
	const preload = 1_000_000
	urls := benchURLs("k", preload)
	for i := 0; i < preload; i += 1000 {
		bt := db.NewBatch()
		if _, err := d.AddBatch(bt, 0, urls[i:i+1000]); err != nil {
			b.Fatal(err)
		}
		if err := db.CommitNoSync(bt); err != nil {
			b.Fatal(err)
		}
	}
	// Query in a scattered order, as links of many pages would arrive.
	query := make([]string, 0, b.N+benchBatch)
	for i := 0; len(query) < b.N+benchBatch; i++ {
		query = append(query, urls[(i*7919)%preload])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += benchBatch {
		bt := db.NewBatch()
		got, err := d.AddBatch(bt, 0, query[i:i+benchBatch])
		if err != nil {
			b.Fatal(err)
		}
		if got[0] {
			b.Fatalf("known URL %q reported new", query[i])
		}
		bt.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkDurableRepeated is what a crawl asks most: the links a page
// shares with the other pages of its site (40 navigation links of one of
// 2,000 hosts) and a few other known URLs, against a store of 200,000
// seen URLs. The stripes' caches answer the navigation links after the
// first read.
func BenchmarkDurableRepeated(b *testing.B) {
	db, d := benchDurable(b)
	defer db.Close()
	const hosts, nav, others = 2000, 40, 100_000
	var all []string
	for h := range hosts {
		for i := range nav {
			all = append(all, fmt.Sprintf("http://h%d.test/nav/%d", h, i))
		}
	}
	all = append(all, benchURLs("o", others)...)
	for i := 0; i < len(all); i += 1000 {
		bt := db.NewBatch()
		if _, err := d.AddBatch(bt, 0, all[i:min(i+1000, len(all))]); err != nil {
			b.Fatal(err)
		}
		if err := db.CommitNoSync(bt); err != nil {
			b.Fatal(err)
		}
	}
	page := make([]string, 0, nav+10)
	b.ReportAllocs()
	b.ResetTimer()
	for p := 0; p < b.N; p += cap(page) {
		h := (p * 7919) % hosts // pages of many hosts, interleaved
		page = append(page[:0], all[h*nav:(h+1)*nav]...)
		for i := range 10 {
			page = append(page, all[hosts*nav+(p*31+i*7)%others])
		}
		bt := db.NewBatch()
		got, err := d.AddBatch(bt, 0, page)
		if err != nil {
			b.Fatal(err)
		}
		if got[0] {
			b.Fatalf("known URL %q reported new", page[0])
		}
		bt.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}
