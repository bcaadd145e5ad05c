// Package replay holds the test that checks a crawl's WACZ in a real
// replay tool: a small site with page requisites of every kind is
// crawled, exported and replayed by ReplayWeb.page in headless Chromium,
// and each replayed page is compared with the same page rendered live,
// pixel by pixel and by what its document reports (styles, images,
// fonts). It has no code of its own beyond the test; see
// docs/design/replay.md.
package replay
