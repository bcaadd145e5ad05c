package testweb

import (
	"fmt"
	"net/netip"
	"strconv"
)

// AddLinkHost adds to w a host named name (lower case), on a loopback
// address of its own after the generated hosts', whose robots.txt allows
// everything and which serves:
//
//	/             an HTML page linking to each of links as written, and to
//	              /redirect/0 ... /redirect/N-1
//	/redirect/i   a 302 whose Location is redirects[i] as written
//
// Links and Locations are not resolved or checked: a test puts exactly the
// spellings it wants on the page (the SSRF test: addresses the crawler
// must refuse). Call it before Serve; the page is then at
// http://name:PORT/ (Server.Port). It returns the host's address, or an
// error if the web has a host of that name. The generated hosts and their
// pages are unchanged.
func (w *Web) AddLinkHost(name string, links, redirects []string) (netip.Addr, error) {
	if w.byName[name] != nil {
		return netip.Addr{}, fmt.Errorf("testweb: AddLinkHost: the web has a host %q", name)
	}
	h := &host{idx: len(w.hosts), name: name, ip: hostIP(len(w.hosts)), robots: robotsAllowAll,
		byPQ: make(map[string]*resource)}
	body := &bodySpec{seed: uint64(len(w.hosts)), size: 200, title: "Links"}
	for _, l := range links {
		body.links = append(body.links, link{raw: l, where: inAnchor})
	}
	page := &resource{host: h, pq: "/", kind: kindHTML, status: 200, body: body}
	h.res, h.regular = append(h.res, page), append(h.regular, page)
	h.byPQ[page.pq] = page
	for i, loc := range redirects {
		r := &resource{host: h, pq: "/redirect/" + strconv.Itoa(i), kind: kindRedirect, status: 302, loc: loc}
		h.res = append(h.res, r)
		h.byPQ[r.pq] = r
		body.links = append(body.links, link{raw: "http://" + name + portToken + r.pq, to: r, where: inAnchor})
	}
	w.hosts = append(w.hosts, h)
	w.byName[name] = h
	return h.ip, nil
}
