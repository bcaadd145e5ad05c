// Package sitemap reads sitemaps as the sitemaps.org protocol (0.9)
// describes them: <urlset> and <sitemapindex> XML files, plain-text files
// of one URL a line, gzip-compressed or not, and says which listed URLs a
// sitemap may speak for (Allowed). It does no I/O of its own.
//
// Read streams a sitemap to a callback entry by entry; memory stays within
// a few times maxToken (1 MiB) whatever the input, and work within the
// Options limits (50,000 entries, 50 MiB uncompressed by default): a file
// past a limit stops with the entries read so far and a *LimitError. A
// malformed file stops with a *SyntaxError, the entries before the fault
// kept. Listed URLs that do not parse are skipped and counted, not errors.
// Functions are safe for concurrent use; Options are only read.
package sitemap
