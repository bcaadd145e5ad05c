// Package robots implements the Robots Exclusion Protocol (RFC 9309): a
// parser and matcher for robots.txt files (Parse, Robots) and the policy
// an origin's answer gives (FromResult, Policy: what a status, a body or a
// failure to fetch allow, RFC 9309 2.3.1).
//
// It is a library: no I/O, no store, no clock of its own. Keeping each
// origin's robots.txt (fetching it in turn, caching it, retrying it, the
// outage rule) is package robotscache's job.
//
// A parsed *Robots and a *Policy are immutable and safe for concurrent
// use. Parse never fails: hostile or broken input yields a (possibly
// empty) rule set plus warnings.
package robots
