package robots_test

import (
	"fmt"

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
