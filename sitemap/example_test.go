package sitemap_test

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/trawl-crawler/trawl/sitemap"
)

func ExampleParse() {
	s, err := sitemap.Parse(strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.test/news/</loc><lastmod>2025-06-01T08:00:00+02:00</lastmod><changefreq>hourly</changefreq><priority>0.9</priority></url>
  <url><loc>https://example.test/about</loc></url>
  <url><loc>https://elsewhere.test/x</loc></url>
</urlset>`), sitemap.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	at, _ := url.Parse("https://example.test/sitemap.xml")
	for _, e := range s.Entries {
		loc, _ := url.Parse(e.Loc)
		fmt.Println(e.Loc, e.LastMod.Format("2006-01-02T15:04Z"), e.ChangeFreq, e.Priority, sitemap.Allowed(at, loc, nil))
	}
	fmt.Println(s.Kind, s.Skipped)
	// Output:
	// https://example.test/news/ 2025-06-01T06:00Z hourly 0.9 true
	// https://example.test/about 0001-01-01T00:00Z  0.5 true
	// https://elsewhere.test/x 0001-01-01T00:00Z  0.5 false
	// urlset 0
}
