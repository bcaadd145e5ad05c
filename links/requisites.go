package links

import (
	"github.com/trawl-crawler/trawl/css"
)

// Requisites: the resources a page embeds, which a browser fetches to
// show it and an archive needs to replay it (Options.Requisites,
// Page.Requisites). Each is a Link whose Tag names the element it came
// from:
//
//   - img[src], img[srcset], source[src], source[srcset] (in <picture>,
//     <video> and <audio>), input[type=image][src]
//   - script[src], link[href] whose rel is stylesheet, icon (and the
//     apple-touch and mask icons), manifest, preload or modulepreload,
//     and a preload's imagesrcset
//   - video[src], video[poster], audio[src], track[src], embed[src],
//     object[data], iframe[src], frame[src]
//   - body, table, td and th[background]; SVG image and use [href] or
//     [xlink:href] (a sprite's symbol)
//   - url() values of any element's style attribute, and url() values
//     and @import rules of <style> elements (Tag "style"; an @import's
//     Rel is "stylesheet")
//
// A srcset gives every candidate URL (HTML's srcset parsing: candidates
// split at commas outside parentheses, descriptors dropped), since a
// replay may ask for any of them. The same skipped schemes and trimming
// apply as for links; each distinct Ref is returned once, the first time
// it is met, at most MaxRequisites of them.

// MaxRequisites caps len(Page.Requisites).
const MaxRequisites = 1000

// requisiteTags are the elements that may embed a resource by an
// attribute, mapped to constant strings that Links share.
var requisiteTags = map[string]string{
	"img": "img", "source": "source", "input": "input", "script": "script", "video": "video",
	"audio": "audio", "track": "track", "embed": "embed", "object": "object", "body": "body",
	"table": "table", "td": "td", "th": "th", "style": "style", "image": "image", "use": "use",
}

// requisiteRels are the link rel tokens whose href is a requisite.
var requisiteRels = []string{"stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed",
	"mask-icon", "manifest", "preload", "modulepreload"}

// requisites adds the resources the element tag (a constant from
// startTag or requisiteTags, "" for any other element) with attributes a
// embeds.
func (e *extractor) requisites(tag string, a *attrs) {
	switch tag {
	case "img", "source":
		if a.hasSrc {
			e.addRequisite(Link{Ref: string(trimSpace(a.src)), Tag: tag})
		}
		e.srcset(tag, a.srcset)
	case "input":
		if a.hasSrc && equivFold(trimSpace(a.typ), "image") {
			e.addRequisite(Link{Ref: string(trimSpace(a.src)), Tag: tag})
		}
	case "script", "audio", "track", "embed", "iframe", "frame":
		if a.hasSrc {
			e.addRequisite(Link{Ref: string(trimSpace(a.src)), Tag: tag})
		}
	case "video":
		if a.hasSrc {
			e.addRequisite(Link{Ref: string(trimSpace(a.src)), Tag: tag})
		}
		if len(a.poster) > 0 {
			e.addRequisite(Link{Ref: string(trimSpace(a.poster)), Tag: tag})
		}
	case "object":
		if len(a.data) > 0 {
			e.addRequisite(Link{Ref: string(trimSpace(a.data)), Tag: tag})
		}
	case "image", "use":
		// SVG's <image> and <use> (an icon sprite: sprite.svg#id) name
		// theirs by href or the older xlink:href; HTML's obsolete <image>
		// is an <img> to a browser.
		switch {
		case a.hasHref:
			e.addRequisite(Link{Ref: string(trimSpace(a.href)), Tag: tag})
		case len(a.xlinkHref) > 0:
			e.addRequisite(Link{Ref: string(trimSpace(a.xlinkHref)), Tag: tag})
		case a.hasSrc && tag == "image":
			e.addRequisite(Link{Ref: string(trimSpace(a.src)), Tag: tag})
		}
	case "body", "table", "td", "th":
		if len(a.background) > 0 {
			e.addRequisite(Link{Ref: string(trimSpace(a.background)), Tag: tag})
		}
	case "link":
		rel := normalizeRel(a.rel)
		for _, r := range requisiteRels {
			if hasToken(rel, r) {
				if a.hasHref {
					e.addRequisite(Link{Ref: string(trimSpace(a.href)), Tag: tag, Rel: rel})
				}
				e.srcset(tag, a.imagesrcset)
				break
			}
		}
	}
	if len(a.style) > 0 {
		for _, r := range css.Refs(a.style, MaxRequisites) {
			if !r.Import { // @import is not allowed in a style attribute
				e.addRequisite(Link{Ref: r.URL, Tag: "style"})
			}
		}
	}
}

// styleSheet adds the references of a <style> element's text.
func (e *extractor) styleSheet(text []byte) {
	for _, r := range css.Refs(text, MaxRequisites) {
		l := Link{Ref: r.URL, Tag: "style"}
		if r.Import {
			l.Rel = "stylesheet"
		}
		e.addRequisite(l)
	}
}

// srcset adds every candidate URL of a srcset attribute's value.
func (e *extractor) srcset(tag string, v []byte) {
	for _, u := range SrcsetURLs(v) {
		e.addRequisite(Link{Ref: u, Tag: tag})
	}
}

// addRequisite appends l to the page's requisites unless it is empty, has
// a skipped scheme, its Ref was met before, or the cap is reached.
func (e *extractor) addRequisite(l Link) {
	if l.Ref == "" || skippedScheme(l.Ref) {
		return
	}
	if _, dup := e.reqSeen[l.Ref]; dup {
		return
	}
	if len(e.page.Requisites) >= MaxRequisites {
		e.page.RequisitesDropped++
		return
	}
	if e.reqSeen == nil {
		e.reqSeen = make(map[string]struct{})
	}
	e.reqSeen[l.Ref] = struct{}{}
	e.page.Requisites = append(e.page.Requisites, l)
}

// SrcsetURLs returns the URLs of the image candidates in a srcset (or
// imagesrcset) attribute value, in order, as HTML's "parse a srcset
// attribute" splits them: leading whitespace and commas skipped, a URL
// runs to the next whitespace (trailing commas cut off, which end the
// candidate), then descriptors run to the next comma outside
// parentheses. Descriptors are not checked: a candidate with bad ones
// is still a URL a page may ask for.
func SrcsetURLs(v []byte) []string {
	var out []string
	i := 0
	for i < len(v) {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			break
		}
		start := i
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		u := v[start:i]
		ended := false
		for len(u) > 0 && u[len(u)-1] == ',' {
			u, ended = u[:len(u)-1], true
		}
		if len(u) > 0 {
			out = append(out, string(u))
		}
		if ended {
			continue
		}
		// Descriptors, up to a comma outside parentheses (which, as in
		// HTML's tokenizer, do not nest: one ')' closes them).
		inParens := false
		for i < len(v) {
			c := v[i]
			i++
			if c == '(' {
				inParens = true
			} else if c == ')' {
				inParens = false
			} else if c == ',' && !inParens {
				break
			}
		}
	}
	return out
}
