// Package dashboard is the live page of `trawl serve`: one HTML page, a
// small script and a style sheet, embedded in the binary (no framework, no
// CDN, no request leaves the server's origin). The page polls GET
// /v1/stats every second and draws its charts from the samples it keeps:
// every rate it shows, a tile's or a chart's point, is over the same
// window of at least 5 s (the newest pair of samples that far apart), so
// a chart ends at its tile's figure; its pause and resume buttons call the API with the bearer token the
// page was given (a #token= fragment, never sent to the server, or typed
// in), kept in the browser's localStorage.
//
// Handler serves GET / (the page) and GET /dashboard/NAME (its files).
// Every answer carries a Content-Security-Policy that allows the page's
// own origin only (no inline script or style, no frames), nosniff and
// no-referrer; files are revalidated on every load (ETag), so a new binary
// serves its new page at once. The handler holds no state and is safe for
// concurrent use.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Prefix is where the page's files are served: Prefix + their name.
const Prefix = "/dashboard/"

// CSP is the Content-Security-Policy of every answer: scripts, styles,
// images and API calls from the page's origin only, nothing else.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// file is one embedded file, ready to serve.
type file struct {
	name  string
	ctype string
	etag  string
	body  []byte
}

// contentTypes are the types of the files' extensions; a file of another
// extension is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// handler serves the embedded files by request path.
type handler map[string]*file

// Handler returns the handler of GET / and GET /dashboard/NAME.
func Handler() http.Handler {
	h := handler{}
	entries, err := fs.ReadDir(static, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	for _, e := range entries {
		ctype, ok := contentTypes[path.Ext(e.Name())]
		if !ok || e.IsDir() {
			continue
		}
		body, err := static.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		f := &file{name: e.Name(), ctype: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, body: body}
		h[Prefix+e.Name()] = f
		if e.Name() == "index.html" {
			h["/"] = f
		}
	}
	return h
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	f := h[r.URL.Path]
	if f == nil || r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Content-Type", "text/plain; charset=utf-8")
		hd.Set("Cache-Control", "no-store")
		code := http.StatusNotFound
		if f != nil {
			code = http.StatusMethodNotAllowed
			hd.Set("Allow", "GET, HEAD")
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(strings.ToLower(http.StatusText(code)) + "\n"))
		return
	}
	hd.Set("Content-Type", f.ctype)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", f.etag)
	// ServeContent answers If-None-Match (304), HEAD and ranges.
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
}
