package testweb

// Body returns the bytes the web sends for rawURL, as transferred, when
// they are the same on every request: an ordinary host's HTML page (that
// does not change over time and carries no session ID), PDF, PNG or
// redirect. ok is false for any other URL (hostile hosts, traps, robots.txt,
// sitemaps, 404s), whose body the caller cannot know in advance. A test
// compares an archive's payloads with it.
func (w *Web) Body(rawURL string) (body []byte, ok bool) {
	h, r, _, err := w.lookup(rawURL)
	if err != nil || r == nil || h.hostile != notHostile {
		return nil, false
	}
	switch r.kind {
	case kindHTML:
		if h.session != noSession || r.change != nil {
			return nil, false
		}
		return w.renderPage(r, ""), true
	case kindPDF:
		return renderPDF(r.seed), true
	case kindPNG:
		return renderPNG(r.seed), true
	case kindRedirect:
		return []byte(redirectBody), true
	}
	return nil, false
}
