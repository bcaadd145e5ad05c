package sitemap

import (
	"bytes"
	"testing"
)

func benchParse(b *testing.B, in []byte, n int) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		got := 0
		if _, err := Read(bytes.NewReader(in), Options{}, func(Entry) error { got++; return nil }); err != nil || got != n {
			b.Fatalf("Read: %d entries, %v", got, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/URL")
}

// BenchmarkParse50k reads a urlset of 50,000 entries, each with lastmod,
// changefreq and priority.
func BenchmarkParse50k(b *testing.B) { benchParse(b, urlset(DefaultMaxURLs), DefaultMaxURLs) }

// BenchmarkParse50kGzip reads the same urlset gzip-compressed.
func BenchmarkParse50kGzip(b *testing.B) { benchParse(b, gz(urlset(DefaultMaxURLs)), DefaultMaxURLs) }
