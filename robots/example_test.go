package robots_test

import (
	"fmt"
	"net/url"
	"time"

	"github.com/trawl-crawler/trawl/robots"
)

func ExampleParse() {
	r := robots.Parse([]byte(`
User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*.pdf$
Crawl-delay: 2
Sitemap: https://example.test/sitemap.xml
`))
	for _, p := range []string{"/", "/private/x", "/private/press/today", "/a.pdf", "/a.pdf?v=2", "/robots.txt"} {
		fmt.Println(p, r.Allowed("trawl", p))
	}
	d, _ := r.CrawlDelay("trawl")
	fmt.Println(d, r.Sitemaps())
	// Output:
	// / true
	// /private/x false
	// /private/press/today true
	// /a.pdf false
	// /a.pdf?v=2 true
	// /robots.txt true
	// 2s [https://example.test/sitemap.xml]
}

func ExampleCache() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := robots.NewCache(robots.CacheOptions{Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	origin := "https://example.test:443"
	if _, ok := c.Lookup(origin); !ok {
		// The crawler fetches https://example.test/robots.txt here.
		c.Store(origin, robots.FetchResult{Status: 503})
	}
	p, _ := c.Lookup(origin)
	u, _ := url.Parse("https://example.test/page")
	fmt.Println(p.Unavailable(), p.Allowed("trawl", u))
	now = now.Add(time.Minute) // retry is due
	_, ok := c.Lookup(origin)
	fmt.Println(ok)
	// Output:
	// true false
	// false
}
