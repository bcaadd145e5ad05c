// Package usagepref reads what a site says about the use of its content,
// beside robots.txt access rules, and gathers what applies to one capture
// (Gather) into Preferences: every signal exactly as served, what it says,
// and a small summary (AITrain, AIInput, Search, Archive), in a stable JSON
// form meant for a WARC metadata record and the crawl log.
//
// It is pure: no I/O, no clock, no global state; safe for concurrent use.
// Every parser is bounded and never panics; bad input is recorded, never
// an error.
//
// Sources and the texts followed:
//
//   - Content-Usage (draft-ietf-aipref-attach-05, August 2026): a robots.txt
//     rule "Content-Usage: [path] pref" in a group, and an HTTP header field.
//     The preference is the vocabulary's exemplary format
//     (draft-ietf-aipref-vocab-07, August 2026, section 6): an RFC 9651
//     Dictionary whose members train-ai and search take the Tokens y or n.
//   - Content-Signal (Cloudflare's Content Signals Policy,
//     contentsignals.org, September 2025): a robots.txt line in a group,
//     "search=yes, ai-input=yes, ai-train=no".
//   - X-Robots-Tag and <meta name=robots> or <meta name=AGENT> (Google's
//     robots meta documentation): noindex, nofollow, none, noarchive,
//     nosnippet, and the de-facto noai and noimageai; "agent: ..." scoping
//     in the header.
//   - TDMRep (W3C TDM Reservation Protocol, Community Group Final Report):
//     the tdm-reservation and tdm-policy header fields and meta elements, and
//     /.well-known/tdmrep.json (ParseTDMRep).
//
// Which robots.txt lines apply to a URL: those of the groups RFC 9309
// selects for the crawler's product token (robots.Robots.ExtrasFor), and
// only if the URL may be crawled at all (attach-05 section 3.1: no
// preference is implied for disallowed paths). Every Content-Signal line
// of those groups applies. Of the Content-Usage rules, the ones whose path
// matches with the longest pattern apply, matched and measured as Allow
// and Disallow are (RFC 9309 2.2.2, octets of the encoded path; a rule
// without a path matches everything with length 0); rules with equal
// paths all apply, combined. Which tdmrep.json rule applies: the first, in
// file order, whose location matches (the report: "The most specific
// match is the first in sequence").
//
// Precedence: statements about one category of use combine as the aipref
// vocabulary says (section 5.1): any deny wins, then any allow, else
// unknown; whatever their source. TDMRep has its own order, kept first
// (meta over header over tdmrep.json, a source without a value leaving
// the earlier one), and its result then joins the others: a reservation
// of 1 denies AITrain, 0 allows it.
package usagepref
