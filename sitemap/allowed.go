package sitemap

import (
	"net/url"
	"strings"

	"github.com/trawl-crawler/trawl/urlnorm"
)

// Allowed reports whether a sitemap at sitemapURL may speak for loc, a URL
// it lists (a page, or a child sitemap of an index). robots is the
// robots.txt whose Sitemap: line named the sitemap, nil if the sitemap
// was found otherwise (at /sitemap.xml by convention, or as the child of
// an index that was itself found so).
//
// The rule is sitemaps.org's (https://www.sitemaps.org/protocol.html):
//   - "Sitemap file location": every URL must use the same protocol and
//     host as the sitemap, and lie under the sitemap's directory: a
//     sitemap at http://example.com/catalog/sitemap.xml may list
//     http://example.com/catalog/... but not http://example.com/images/...;
//   - "Sitemaps & Cross Submits": a sitemap named in a host's robots.txt
//     speaks for that whole host, wherever the sitemap itself is stored,
//     because the host's owner named it. Then loc must be on robots'
//     origin, any path, and the sitemap's own location does not matter.
//
// Origins compare after urlnorm.Normalize (scheme and host in lower case,
// default port dropped), paths as normalised and escaped, case-sensitively.
// The children of an index named in robots.txt inherit that robots.txt:
// pass the same robots for their entries. Nil sitemapURL or loc report
// false.
func Allowed(sitemapURL, loc, robots *url.URL) bool {
	if sitemapURL == nil || loc == nil {
		return false
	}
	l := urlnorm.Normalize(loc)
	if robots != nil {
		r := urlnorm.Normalize(robots)
		return l.Scheme == r.Scheme && l.Host == r.Host
	}
	s := urlnorm.Normalize(sitemapURL)
	if l.Scheme != s.Scheme || l.Host != s.Host {
		return false
	}
	sp := s.EscapedPath()
	dir := sp[:strings.LastIndexByte(sp, '/')+1]
	return strings.HasPrefix(l.EscapedPath(), dir)
}
