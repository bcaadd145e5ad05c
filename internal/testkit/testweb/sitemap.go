package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Sitemaps (Options.Sitemaps). By small host number s, on ordinary hosts:
//
//	s%7 == 5   /sitemap.xml, a urlset of the host's regular pages with lastmod;
//	           if s%14 == 5, also two sitemap-only pages
//	s%7 == 3   (hosts whose robots.txt answers 200) a Sitemap: line in robots.txt
//	           naming /sitemap_index.xml, an index of /sitemaps/pages-1.xml and the
//	           gzipped /sitemaps/pages-2.xml.gz, half the pages each;
//	           if s%14 == 3, also two sitemap-only pages
//	s == 6     /sitemap.xml breaks off after two entries (malformed)
//	s == 13    /sitemap.xml is a gzip bomb: two entries, then comments past 50 MiB
//	s == 20    /sitemap.xml lists the next host's pages (refused by the host rule)
//
// Sitemap-only pages are regular HTML pages under /fresh/ that no page
// links to (Page.SitemapOnly); they link back home. Sitemap files are not
// Pages; Web.Sitemaps lists them.

// sitemapKind is which sitemap a host serves.
type sitemapKind int

const (
	noSitemap        sitemapKind = iota
	sitemapPlain                 // /sitemap.xml
	sitemapIndex                 // /sitemap_index.xml named in robots.txt, two children
	sitemapMalformed             // /sitemap.xml cut off mid-file
	sitemapBomb                  // /sitemap.xml inflating past 50 MiB
	sitemapCrossHost             // /sitemap.xml listing another host's pages
)

// noteSitemapOnly labels pages only a sitemap lists.
const noteSitemapOnly = "sitemap-only"

// sitemapOnlyPages is how many sitemap-only pages a host gets.
const sitemapOnlyPages = 2

// bombBytes is how far the bomb inflates: past sitemaps.org's 50 MiB.
const bombBytes = 56 << 20

// makeSitemap decides h's sitemap and adds its sitemap-only pages.
func (g *gen) makeSitemap(h *host) {
	s := h.idx - g.o.BigHosts
	switch {
	case s < 0:
		return
	case s == 6:
		h.sitemap = sitemapMalformed
	case s == 13:
		h.sitemap = sitemapBomb
	case s == 20:
		h.sitemap = sitemapCrossHost
	case s%7 == 5:
		h.sitemap = sitemapPlain
	case s%7 == 3 && h.robots.text() != "":
		h.sitemap = sitemapIndex
	}
	if (h.sitemap == sitemapPlain || h.sitemap == sitemapIndex) && s%14 == s%7 {
		for i := 1; i <= sitemapOnlyPages; i++ {
			h.sitemapOnly = append(h.sitemapOnly, g.page(h, fmt.Sprintf("/fresh/only-%d-%d.html", h.idx, i), noteSitemapOnly))
		}
	}
}

// SitemapFile is one sitemap file a host serves (Options.Sitemaps).
type SitemapFile struct {
	URL  string // canonical
	Host string
	// Kind is "urlset", "index", "malformed" (breaks off after Entries),
	// "bomb" (gzip inflating past 50 MiB after Entries) or "cross-host"
	// (lists another host's pages, which the sitemaps.org host rule refuses).
	Kind     string
	Gzip     bool // the body is gzip-compressed (never said by Content-Encoding)
	InRobots bool // named by a Sitemap: line of the host's robots.txt
	// ViaRobots: InRobots, or a child of an index that is. Such a file
	// speaks for its whole host (sitemaps.org cross submits; see
	// sitemap.Allowed), wherever it sits; others only for their directory.
	ViaRobots bool
	// Entries are what the file lists, in order: pages, or for an index
	// its child sitemaps; for malformed and bomb, the entries before the fault.
	Entries []SitemapEntry
}

// SitemapEntry is one URL a sitemap lists.
type SitemapEntry struct {
	URL     string // canonical
	LastMod time.Time
}

// Sitemaps lists every sitemap file of the web, host by host; empty
// unless Options.Sitemaps.
func (w *Web) Sitemaps() []SitemapFile {
	var out []SitemapFile
	for _, h := range w.hosts {
		out = append(out, w.sitemapFiles(h)...)
	}
	return out
}

// lastMod is the lastmod a sitemap gives r: a minute in 2024-2025 drawn
// from its seed.
func lastMod(r *resource) time.Time {
	return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.seed%(700*24*60)) * time.Minute)
}

// listed is what h's sitemaps list: its regular pages and its
// sitemap-only pages.
func (h *host) listed() []*resource {
	return append(append([]*resource(nil), h.regular...), h.sitemapOnly...)
}

func (w *Web) entries(rs []*resource) []SitemapEntry {
	out := make([]SitemapEntry, 0, len(rs))
	for _, r := range rs {
		out = append(out, SitemapEntry{URL: r.url(w), LastMod: lastMod(r)})
	}
	return out
}

// sitemapFiles lists the files h serves.
func (w *Web) sitemapFiles(h *host) []SitemapFile {
	file := func(pq, kind string, gz, inRobots bool, e []SitemapEntry) SitemapFile {
		return SitemapFile{URL: w.urlOf(h, pq), Host: h.name, Kind: kind, Gzip: gz, InRobots: inRobots,
			ViaRobots: h.sitemap == sitemapIndex, Entries: e}
	}
	pages := h.listed()
	switch h.sitemap {
	case sitemapPlain:
		return []SitemapFile{file("/sitemap.xml", "urlset", false, false, w.entries(pages))}
	case sitemapIndex:
		half := (len(pages) + 1) / 2
		c1 := file("/sitemaps/pages-1.xml", "urlset", false, false, w.entries(pages[:half]))
		c2 := file("/sitemaps/pages-2.xml.gz", "urlset", true, false, w.entries(pages[half:]))
		idx := file("/sitemap_index.xml", "index", false, true, []SitemapEntry{
			{URL: c1.URL, LastMod: latest(c1.Entries)}, {URL: c2.URL, LastMod: latest(c2.Entries)}})
		return []SitemapFile{idx, c1, c2}
	case sitemapMalformed:
		return []SitemapFile{file("/sitemap.xml", "malformed", false, false, w.entries(pages[:min(2, len(pages))]))}
	case sitemapBomb:
		return []SitemapFile{file("/sitemap.xml", "bomb", true, false, w.entries(pages[:min(2, len(pages))]))}
	case sitemapCrossHost:
		other := w.hosts[(h.idx+1)%len(w.hosts)]
		return []SitemapFile{file("/sitemap.xml", "cross-host", false, false, w.entries(other.regular))}
	}
	return nil
}

func latest(es []SitemapEntry) time.Time {
	var t time.Time
	for _, e := range es {
		if e.LastMod.After(t) {
			t = e.LastMod
		}
	}
	return t
}

// isSitemapPath reports whether pq (canonical) is where some host of a
// web with sitemaps may serve one; a crawler asks every host for
// /sitemap.xml.
func isSitemapPath(pq string) bool {
	return pq == "/sitemap.xml" || pq == "/sitemap_index.xml" || strings.HasPrefix(pq, "/sitemaps/")
}

// sitemapListed returns the pages of h a crawler learns from its sitemaps
// and may queue: what its urlset files list (the entries before the fault
// too); nothing from a cross-host file, which the host rule refuses.
func (w *Web) sitemapListed(h *host) []*resource {
	switch h.sitemap {
	case sitemapPlain, sitemapIndex:
		return h.listed()
	case sitemapMalformed, sitemapBomb:
		return h.listed()[:min(2, len(h.regular))]
	}
	return nil
}

// robotsBody is h's robots.txt as served with status 200: its kind's
// rules and, on an index host, the Sitemap: line.
func (w *Web) robotsBody(h *host) []byte {
	t := h.robots.text()
	if h.sitemap == sitemapIndex {
		t += "\nSitemap: " + w.urlOf(h, "/sitemap_index.xml") + "\n"
	}
	return []byte(t)
}

// serveSitemap answers a request for one of h's sitemap files and
// reports whether pq was one.
func (s *Server) serveSitemap(w http.ResponseWriter, r *http.Request, h *host, pq string) bool {
	for _, f := range s.web.sitemapFiles(h) {
		if f.URL != s.web.urlOf(h, pq) {
			continue
		}
		var b bytes.Buffer
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
		root, item := "urlset", "url"
		if f.Kind == "index" {
			root, item = "sitemapindex", "sitemap"
		}
		fmt.Fprintf(&b, "<%s xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n", root)
		for _, e := range f.Entries {
			fmt.Fprintf(&b, "  <%s><loc>%s</loc><lastmod>%s</lastmod></%s>\n", item, xmlText(e.URL), e.LastMod.Format(time.RFC3339), item)
		}
		switch f.Kind {
		case "malformed":
			b.WriteString("  <url><loc>" + xmlText(s.web.urlOf(h, "/never-listed.html")) + "</loc\n  <<<< the generator crashed here >>>>\n")
		case "bomb":
			body := append(gzipBytes(b.Bytes()), bombPadding()...)
			send(w, r, http.StatusOK, "application/xml", body) // a gzip body under an XML type: servers lie
			return true
		default:
			fmt.Fprintf(&b, "</%s>\n", root)
		}
		ctype := "application/xml"
		body := b.Bytes()
		if f.Gzip {
			ctype, body = "application/x-gzip", gzipBytes(body)
		}
		send(w, r, http.StatusOK, ctype, body)
		return true
	}
	return false
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func xmlText(s string) string { return xmlEscaper.Replace(s) }

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(b) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return out.Bytes()
}

var (
	bombOnce sync.Once
	bombGz   []byte
)

// bombPadding is a gzip member that inflates to bombBytes of XML comments,
// made once by streaming (the 56 MiB are never held) and kept compressed
// (about 60 KB). It follows the bomb's first member: readers of
// concatenated gzip members (RFC 1952 2.2) see one stream.
func bombPadding() []byte {
	bombOnce.Do(func() {
		var out bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression) // the level is valid
		chunk := []byte("<!--" + strings.Repeat(" padding", 4090) + "    -->\n")
		for n := 0; n < bombBytes; n += len(chunk) {
			_, _ = zw.Write(chunk)
		}
		_ = zw.Close()
		bombGz = out.Bytes()
	})
	return bombGz
}
