package warc

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Defaults applied by Options.withDefaults.
const (
	DefaultPrefix      = "trawl"
	DefaultMaxFileSize = 1 << 30 // 1 GiB
	DefaultSoftware    = "trawl"
	// DefaultGzipLevel is the gzip level of each record's member when
	// Options.GzipLevel is 0: the fastest. On `trawl bench crawl`'s web
	// (HTML of 20-60 KB) level 1 makes files 6% larger than level 5
	// (klauspost/compress's default; zlib's 6 is what Heritrix and wget
	// use) for about a quarter less CPU in the WARC stage. An archive
	// that prefers bytes to CPU sets 9, or recompresses later.
	DefaultGzipLevel = 1
)

// Options configures a Writer. Dir is required; every other zero field takes
// the default named in its comment.
type Options struct {
	// Dir is the directory the WARC files are written to. It is created
	// (with parents) if missing.
	Dir string
	// Prefix starts every file name. If empty, DefaultPrefix ("trawl") is
	// used. It may not contain a path separator.
	Prefix string
	// MaxFileSize is the size in bytes (compressed, as on disk) a file may
	// reach before the writer starts the next one. If zero, DefaultMaxFileSize
	// (1 GiB) is used. A single exchange larger than this still gets written,
	// into a file of its own.
	MaxFileSize int64
	// GzipLevel is the compression level of each record's gzip member, 1
	// (fastest) to 9 (smallest). Any level makes the same format: readers
	// do not care. If zero, DefaultGzipLevel is used.
	GzipLevel int
	// MinSyncInterval is the least time between the starts of two fsync
	// rounds (see Durability): under load, exchanges written meanwhile
	// share the next fsync, which costs CPU as well as disk time, at the
	// price of up to this much more latency for Durable. Zero syncs as
	// soon as a round is asked for; Pebble's WALMinSyncInterval does the
	// same for its log.
	MinSyncInterval time.Duration
	// Software is the warcinfo "software" field. If empty, DefaultSoftware is used.
	Software string
	// Info holds extra warcinfo fields (operator, robots, http-header-user-agent,
	// isPartOf, ...), written in sorted key order after software, format and
	// conformsTo, which it may not redefine.
	Info map[string]string
	// Now is the clock used for file names and warcinfo dates. If nil,
	// time.Now is used.
	Now func() time.Time
	// OnFinish, if set, is called once for each file the writer finishes,
	// after the file is fsynced, closed, renamed to its final name (path,
	// as in Location.File) and the directory synced, and after the
	// Durable waiters of that round are acknowledged: everything captures
	// describes is on stable storage. captures lists the file's response
	// and revisit records in file order (the caller may keep the slice).
	// It is called from the syncer goroutine, one file at a time in the
	// order the files were begun, and the next fsync round waits for it:
	// it must not call the Writer's Sync, Durable's channel or Close, and
	// should be quick (writing a small index file is). A file that is not
	// finished (the writer stopped on an error, or a failed write could
	// not be cut back) is never passed: it keeps OpenSuffix for Recover.
	OnFinish func(path string, captures []Capture)
	// FS is the file system every file and directory operation goes
	// through (create, write, sync, rename, remove, stat, list, directory
	// sync), so that a test can run the writer on the same crashable
	// vfs.MemFS as the store, or on an error-injecting one. If nil,
	// vfs.Default (the operating system's) is used.
	FS vfs.FS
}

// reservedInfo are the warcinfo fields the writer itself sets.
var reservedInfo = map[string]bool{"software": true, "format": true, "conformsto": true}

// withDefaults returns a copy of o with every zero field given its default.
func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Software == "" {
		o.Software = DefaultSoftware
	}
	if o.GzipLevel == 0 {
		o.GzipLevel = DefaultGzipLevel
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	return o
}

// Validate reports every bad field of o by name. Zero fields that have a
// default are valid.
func (o Options) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("Dir is required"))
	}
	if strings.ContainsAny(o.Prefix, `/\`) || strings.ContainsFunc(o.Prefix, isCTLOrSpace) {
		errs = append(errs, fmt.Errorf("Prefix %q: must not contain a path separator, space or control character", o.Prefix))
	}
	if o.MaxFileSize < 0 {
		errs = append(errs, fmt.Errorf("MaxFileSize %d: must not be negative", o.MaxFileSize))
	}
	if o.MinSyncInterval < 0 || o.MinSyncInterval > time.Second {
		errs = append(errs, fmt.Errorf("MinSyncInterval %v: must be 0 to 1s", o.MinSyncInterval))
	}
	if o.GzipLevel < 0 || o.GzipLevel > 9 {
		errs = append(errs, fmt.Errorf("GzipLevel %d: must be 1 (fastest) to 9 (smallest), or 0 for the default", o.GzipLevel))
	}
	if strings.ContainsFunc(o.Software, isCTL) {
		errs = append(errs, fmt.Errorf("Software %q: must not contain control characters", o.Software))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Info)) {
		v := o.Info[k]
		switch {
		case k == "" || strings.ContainsFunc(k, isCTLOrSpace) || strings.ContainsRune(k, ':'):
			errs = append(errs, fmt.Errorf("Info key %q: must be a non-empty token without ':', space or control characters", k))
		case reservedInfo[strings.ToLower(k)]:
			errs = append(errs, fmt.Errorf("Info key %q: set by the writer (use Software)", k))
		case strings.ContainsFunc(v, isCTL):
			errs = append(errs, fmt.Errorf("Info[%q] = %q: must not contain control characters", k, v))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("warc: invalid options: %w", errors.Join(errs...))
	}
	return nil
}

func isCTL(r rune) bool        { return r < 0x20 || r == 0x7f }
func isCTLOrSpace(r rune) bool { return r <= 0x20 || r == 0x7f }
