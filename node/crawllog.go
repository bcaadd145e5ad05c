package node

import (
	"crypto/sha256"
	"errors"
	"path/filepath"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/scope"
	"github.com/trawl-crawler/trawl/warc"
)

// The node's crawl log (package crawllog): one line per fetch attempt,
// page or robots.txt, and per URL dropped without a fetch, under
// DataDir/logs. Off when the node runs on a file system other than the
// OS's (Options.FS, in tests), since the log is written with package os.
// The lines are crawlLog's; the node holds one (Node.clog), on or off.

// logDir is where the crawl log lives under the data directory.
const logDir = "logs"

// crawlLog writes the node's crawl log: it builds each line from what
// the pipeline hands it (a fetch that got no response, a response with
// what the content-seen gates said, a URL dropped and why) and writes it.
// Invariant: off, every method does nothing and builds no line; on, each
// call writes exactly one line, stamped with the node's clock. Safe for
// concurrent use: a line takes only the writer's own lock.
type crawlLog struct {
	w   *crawllog.Writer // nil: off
	now func() time.Time // Options.Now
}

// on reports whether the log is written: a caller may skip building what
// only a line needs.
func (c *crawlLog) on() bool { return c.w != nil }

// write writes e, if the log is on.
func (c *crawlLog) write(e *crawllog.Entry) {
	if c.w != nil {
		c.w.Write(e)
	}
}

// close closes the log, if it is on: every line written is flushed and
// synced.
func (c *crawlLog) close() error {
	if c.w == nil {
		return nil
	}
	return c.w.Close()
}

// failure logs a fetch of it for j that got no response.
func (c *crawlLog) failure(j *job.Job, it frontier.Item, url string, robotsTxt bool, start time.Time, err error) {
	if c.w == nil {
		return
	}
	now := c.now()
	c.w.Write(&crawllog.Entry{Time: now.UTC(), Job: j.ID, URL: url, Robots: robotsTxt,
		Error: string(fetch.ClassOf(err)), Duration: now.Sub(start), Depth: it.Depth, Via: it.Via})
}

// verdict is what the content-seen gates said of a response.
type verdict struct {
	exact  *dedup.Original // an archived response with the same payload
	near   *dedup.Match    // an archived page whose text is near
	digest string          // the payload digest the WARC record carries, "" if none
	// notModified: a 304 to a conditional request, archived as a
	// server-not-modified revisit of exact (if known)
	notModified bool
	// usage and denied: what the site says of the use of the capture,
	// and the job's purpose if it denies it (usage.go)
	usage, denied string
}

// response logs a fetch of it for j that got resp, archived at loc.
func (c *crawlLog) response(j *job.Job, it frontier.Item, robotsTxt bool, resp *fetch.Response, loc warc.Location, v verdict) {
	if c.w == nil {
		return
	}
	e := &crawllog.Entry{Time: c.now().UTC(), Job: j.ID, URL: resp.URL, Robots: robotsTxt,
		Status: resp.Status, Bytes: int64(len(resp.Body)), MIME: resp.MediaType, Duration: resp.Duration,
		Depth: it.Depth, Via: it.Via, Digest: v.digest, Offset: loc.Offset, Usage: v.usage, Denied: v.denied}
	if loc.File != "" { // none when not archived (a purpose the site denies)
		e.WARC = filepath.Base(loc.File)
	}
	switch resp.Truncated {
	case "length":
		e.Error = crawllog.ErrTooLarge
	case "time":
		e.Error = crawllog.ErrBodyTimeout
	case "disconnect", "unspecified":
		e.Error = crawllog.ErrBodyCut
	}
	if e.Error == "" && resp.DecodeErr != nil {
		e.Error = crawllog.ErrDecode
	}
	switch {
	case v.notModified:
		e.Dedup = crawllog.DedupNotModified
		if v.exact != nil {
			e.Original = v.exact.URL
		}
	case v.exact != nil:
		e.Dedup, e.Original = crawllog.DedupExact, v.exact.URL
	case v.near != nil:
		e.Dedup, e.Original = crawllog.DedupNear, v.near.URL
	}
	c.w.Write(e)
}

// digestOf is the payload digest a response's WARC record carries: the
// SHA-256 of the body as transferred, as the gate computed it (warcSum,
// if eligible) or from the decoded sum when nothing was decoded.
func digestOf(resp *fetch.Response, sum [sha256.Size]byte, hasSum, eligible bool, warcSum [sha256.Size]byte) string {
	switch {
	case eligible:
		return warc.Digest(warcSum[:])
	case hasSum && resp.Identity():
		return warc.Digest(sum[:])
	}
	return ""
}

// drop logs a URL of it dropped without a fetch.
func (c *crawlLog) drop(it frontier.Item, reason, detail string) {
	if c.w == nil {
		return
	}
	c.w.Write(&crawllog.Entry{Time: c.now().UTC(), Job: it.Job, URL: it.URL, Depth: it.Depth, Via: it.Via,
		Dropped: reason, Detail: detail})
}

// frontierDropped is the frontier's OnDrop: items its budget rules or a
// dropped host discarded. Called under the frontier's lock; writing a
// line takes only the log's own.
func (n *Node) frontierDropped(it frontier.Item, why frontier.DropReason) {
	switch why {
	case frontier.DropBudget:
		n.clog.drop(it, crawllog.DropBudget, "host budget spent")
	case frontier.DropDuplicates:
		n.clog.drop(it, crawllog.DropBudget, "host budget cut: mostly duplicates")
	case frontier.DropHost:
		n.clog.drop(it, crawllog.DropUnreachable, "host dropped")
	case frontier.DropFailing:
		// Its fetches ended without a response, the same way, too many
		// times in a row (frontier.Options.FailLimit).
		n.clog.drop(it, crawllog.DropUnreachable, "host failing")
	case frontier.DropRetryAfter, frontier.DropBackoff, frontier.DropRobotsWait:
		n.gaveUpWaiting(it, why)
	}
	// Items of a cancelled job are not logged one by one.
}

// scopeDropped logs a link found on a page that scope or a trap rule
// rejected. Links to other domains are only counted: most links of most
// pages point off the crawl, and none was ever the crawl's to fetch.
func (c *crawlLog) scopeDropped(j *job.Job, cd candidate, err error) {
	if c.w == nil {
		return
	}
	var rej *scope.Rejection
	if !errors.As(err, &rej) || rej.Reason == scope.ReasonDomain {
		return
	}
	reason := crawllog.DropTrap
	switch rej.Reason {
	case scope.ReasonScheme, scope.ReasonDepth:
		reason = crawllog.DropScope
	}
	c.w.Write(&crawllog.Entry{Time: c.now().UTC(), Job: j.ID, URL: cd.u.String(), Depth: cd.depth, Via: cd.via,
		Dropped: reason, Detail: string(rej.Reason) + ": " + rej.Detail})
}
