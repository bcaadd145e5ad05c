// Package urlnorm turns links into URLs a crawler can fetch and compare:
// WHATWG (browser) link parsing, a canonical form for seen-checks, RFC 3986
// reference resolution, a politeness host key and the registered domain.
//
// All functions are pure and safe for concurrent use; inputs are never
// modified. Invariant: Normalize is idempotent, and its output re-parses
// (with Parse) to itself.
package urlnorm
