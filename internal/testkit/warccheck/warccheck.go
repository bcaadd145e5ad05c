// Package warccheck validates WARC files independently of the Go code that
// wrote them, by running tools/warcvalidate/validate.mjs (the npm package
// warcio) under Node and decoding its JSON report. It is a test helper: it
// needs node on PATH and `npm ci --prefix tools/warcvalidate` run once. It
// holds no state and is safe for concurrent use.
package warccheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Report is the JSON object validate.mjs prints.
type Report struct {
	Files     int            `json:"files"`     // files read
	Records   int            `json:"records"`   // records in all files
	ByType    map[string]int `json:"byType"`    // records per WARC-Type
	Responses []Response     `json:"responses"` // response records in file order
	Revisits  []Revisit      `json:"revisits"`  // revisit records in file order
	Errors    []string       `json:"errors"`    // every problem found; empty if the files are valid
}

// Response is one response record as warcio read it.
type Response struct {
	URI    string `json:"uri"`    // WARC-Target-URI
	Status int    `json:"status"` // HTTP status code
	File   string `json:"file"`   // file as passed to Validate
	Offset int64  `json:"offset"` // offset of the record's gzip member
	Length int64  `json:"length"` // length of that gzip member
	// PayloadDigest is WARC-Payload-Digest, Date WARC-Date.
	PayloadDigest string `json:"payloadDigest"`
	Date          string `json:"date"`
	// Truncated is WARC-Truncated, "" if the record has none.
	Truncated string `json:"truncated"`
	// PayloadLength and PayloadSHA256 (lower-case hex) are those of the
	// payload warcio read: the block past the HTTP headers.
	PayloadLength int64  `json:"payloadLength"`
	PayloadSHA256 string `json:"payloadSHA256"`
	// DeclaredLength is the HTTP Content-Length, -1 if there is none or
	// the status has no body (1xx, 204, 304). Validate reports a record
	// whose payload is not that long and that has no WARC-Truncated.
	DeclaredLength int64 `json:"declaredLength"`
	// Protocols is WARC-Protocol as warcio reads it: its values joined
	// with ", " when the field is repeated ("h2, tls/1.3"); "" if none.
	Protocols string `json:"protocols"`
}

// Payloads checks the report's response and revisit records against what
// the server sent: sent maps a URL to its body, as transferred (content
// coding kept); URLs not in it are not checked. A response record must
// hold that body whole, or say WARC-Truncated and hold a shorter prefix
// of it; a revisit's payload digest must be the body's SHA-256. It
// returns one problem per record that does not.
func (r *Report) Payloads(sent map[string][]byte) []string {
	var problems []string
	for _, x := range r.Responses {
		body, ok := sent[x.URI]
		if !ok {
			continue
		}
		n := int64(len(body))
		switch {
		case x.Truncated == "" && (x.PayloadLength != n || x.PayloadSHA256 != hexSHA256(body)):
			problems = append(problems, fmt.Sprintf("response of %s at %s offset %d: a payload of %d bytes (sha256 %s), not the %d bytes sent (sha256 %s), and no WARC-Truncated",
				x.URI, x.File, x.Offset, x.PayloadLength, x.PayloadSHA256, n, hexSHA256(body)))
		case x.Truncated != "" && (x.PayloadLength >= n || x.PayloadSHA256 != hexSHA256(body[:x.PayloadLength])):
			problems = append(problems, fmt.Sprintf("response of %s at %s offset %d: WARC-Truncated %q over %d payload bytes, not a shorter prefix of the %d bytes sent",
				x.URI, x.File, x.Offset, x.Truncated, x.PayloadLength, n))
		}
	}
	for _, x := range r.Revisits {
		body, ok := sent[x.URI]
		if !ok || x.Profile != revisitIdentical {
			continue
		}
		sum := sha256.Sum256(body)
		if want := "sha256:" + base32.StdEncoding.EncodeToString(sum[:]); x.PayloadDigest != want {
			problems = append(problems, fmt.Sprintf("revisit of %s at %s offset %d: payload digest %s, but the %d bytes sent are %s",
				x.URI, x.File, x.Offset, x.PayloadDigest, len(body), want))
		}
	}
	return problems
}

// revisitIdentical is the WARC 1.1 identical-payload-digest profile.
const revisitIdentical = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"

// hexSHA256 is b's SHA-256 in lower-case hex, as validate.mjs writes it.
func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Archived returns the target URIs of the report's response and revisit
// records: the URLs whose fetch the files hold.
func (r *Report) Archived() map[string]bool {
	out := make(map[string]bool, len(r.Responses)+len(r.Revisits))
	for _, x := range r.Responses {
		out[x.URI] = true
	}
	for _, x := range r.Revisits {
		out[x.URI] = true
	}
	return out
}

// Unresolved returns the revisit records that do not resolve to their
// original: a response record (never a revisit) of the WARC-Refers-To
// URI and date with the same payload digest, among the report's files,
// with the given profile and WARC-Refers-To set. A revisit of another
// profile (a server-not-modified one, say) is unresolved: check each
// profile's revisits by their own rule.
func (r *Report) Unresolved(profile string) []Revisit {
	digest := make(map[string]string, len(r.Responses)) // URI and date -> payload digest
	for _, x := range r.Responses {
		digest[x.URI+" "+x.Date] = x.PayloadDigest
	}
	var out []Revisit
	for _, x := range r.Revisits {
		d, ok := digest[x.RefersToURI+" "+x.RefersToDate]
		if !ok || d != x.PayloadDigest || x.Profile != profile || x.RefersTo == "" {
			out = append(out, x)
		}
	}
	return out
}

// Revisit is one revisit record as warcio read it.
type Revisit struct {
	URI           string `json:"uri"`           // WARC-Target-URI
	Status        int    `json:"status"`        // HTTP status code (304 for a server-not-modified revisit); 0 if none
	Profile       string `json:"profile"`       // WARC-Profile
	RefersToURI   string `json:"refersToURI"`   // WARC-Refers-To-Target-URI
	RefersToDate  string `json:"refersToDate"`  // WARC-Refers-To-Date
	RefersTo      string `json:"refersTo"`      // WARC-Refers-To
	PayloadDigest string `json:"payloadDigest"` // WARC-Payload-Digest
	File          string `json:"file"`
	Offset        int64  `json:"offset"`
	Length        int64  `json:"length"`
}

// Script is the validator's path relative to the repository root.
const Script = "tools/warcvalidate/validate.mjs"

// InstallHint is the command that installs the validator's dependencies.
const InstallHint = "npm ci --prefix tools/warcvalidate"

// Validate runs the validator over files and returns its report. The error is
// nil when the validator ran, even if it found problems (see Report.Errors);
// it is non-nil when node or the validator's node_modules are missing, or
// the validator could not run or report.
func Validate(files ...string) (*Report, error) {
	if len(files) == 0 {
		return nil, errors.New("warccheck: validate: no files")
	}
	root, node, err := nodeAndRoot()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "tools", "warcvalidate", "node_modules", "warcio")); err != nil {
		return nil, fmt.Errorf("warccheck: warcio is not installed: run %q in %s", InstallHint, root)
	}
	abs := make([]string, len(files))
	for i, f := range files {
		if abs[i], err = filepath.Abs(f); err != nil {
			return nil, fmt.Errorf("warccheck: validate %s: %w", f, err)
		}
	}
	cmd := exec.Command(node, append([]string{filepath.Join(root, Script)}, abs...)...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exitErr) && exitErr.ExitCode() == 1) {
		return nil, fmt.Errorf("warccheck: run %s: %w; stderr: %s", Script, runErr, stderr.Bytes())
	}
	var r Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("warccheck: decode report of %s: %w; stdout: %q; stderr: %s", Script, err, stdout.Bytes(), stderr.Bytes())
	}
	if runErr != nil && len(r.Errors) == 0 {
		return nil, fmt.Errorf("warccheck: %s exited 1 but reported no error; stderr: %s", Script, stderr.Bytes())
	}
	// Report paths as the caller gave them.
	for i := range r.Responses {
		for j, a := range abs {
			if r.Responses[i].File == a {
				r.Responses[i].File = files[j]
			}
		}
	}
	return &r, nil
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("warccheck: find repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("warccheck: find repository root: no go.mod in %s or above", wd)
		}
	}
}

// CDXIndex runs `warcio cdx-index --format cdxj` (tools/warcvalidate's
// node_modules) over files and returns its lines, without their LF, in the
// order warcio wrote them (file order, not sorted). Filenames in the lines
// are the files' base names, as warcio writes them.
func CDXIndex(files ...string) ([]string, error) {
	if len(files) == 0 {
		return nil, errors.New("warccheck: cdx-index: no files")
	}
	root, node, err := nodeAndRoot()
	if err != nil {
		return nil, err
	}
	cli := filepath.Join(root, "tools", "warcvalidate", "node_modules", "warcio", "dist", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("warccheck: warcio is not installed: run %q in %s", InstallHint, root)
	}
	abs := make([]string, len(files))
	for i, f := range files {
		if abs[i], err = filepath.Abs(f); err != nil {
			return nil, fmt.Errorf("warccheck: cdx-index %s: %w", f, err)
		}
	}
	cmd := exec.Command(node, append([]string{cli, "cdx-index", "--format", "cdxj"}, abs...)...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("warccheck: warcio cdx-index: %w; stderr: %s", err, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		return nil, fmt.Errorf("warccheck: warcio cdx-index warned: %s", stderr.Bytes())
	}
	var lines []string
	for _, l := range bytes.Split(stdout.Bytes(), []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, string(l))
		}
	}
	return lines, nil
}

// nodeAndRoot returns the repository's root and the node binary that
// runs warcio.
func nodeAndRoot() (root, node string, err error) {
	if root, err = repoRoot(); err != nil {
		return "", "", err
	}
	if node, err = exec.LookPath("node"); err != nil {
		return "", "", fmt.Errorf("warccheck: node not found on PATH (install Node.js 20+, then run %q in %s): %w", InstallHint, root, err)
	}
	return root, node, nil
}

// SURTs returns warcio's SURT key (its getSurt) of each URL, computed by
// node, so that a Go SURT can be checked against it.
func SURTs(urls ...string) ([]string, error) {
	root, node, err := nodeAndRoot()
	if err != nil {
		return nil, err
	}
	utils := filepath.Join(root, "tools", "warcvalidate", "node_modules", "warcio", "dist", "utils.js")
	if _, err := os.Stat(utils); err != nil {
		return nil, fmt.Errorf("warccheck: warcio is not installed: run %q in %s", InstallHint, root)
	}
	in, err := json.Marshal(urls)
	if err != nil {
		return nil, err
	}
	script := `import {getSurt} from ` + strconvQuote("file://"+utils) + `;
let s = ""; process.stdin.on("data", d => s += d).on("end", () => console.log(JSON.stringify(JSON.parse(s).map(getSurt))));`
	cmd := exec.Command(node, "--input-type=module", "-e", script)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("warccheck: getSurt: %w; stderr: %s", err, stderr.Bytes())
	}
	var out []string
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != len(urls) {
		return nil, fmt.Errorf("warccheck: getSurt: decode %q: %v", stdout.Bytes(), err)
	}
	return out, nil
}

// strconvQuote quotes s as a JavaScript string literal.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cdxjLine is what ResolveRevisits reads of a CDXJ line.
type cdxjLine struct {
	key      string // "SURT TIMESTAMP"
	URL      string `json:"url"`
	Mime     string `json:"mime"`
	Digest   string `json:"digest"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// ResolveRevisits checks that every revisit in a CDXJ index resolves
// through the index alone, as a replay tool resolves it: lines is the
// index (sorted bytewise, as a CDXJ file is), rep warcio's report of
// the same WARC files. A revisit line carries no WARC-Refers-To fields,
// so they are taken from the revisit record at the line's file and
// offset in rep; the original is then looked up by binary search on
// its key, warcio's SURT of WARC-Refers-To-Target-URI and the
// 14-digit WARC-Refers-To-Date, and must be a line that is not a
// revisit (mime "warc/revisit") with the revisit line's digest. It
// returns one problem per revisit line that does not resolve, per
// revisit record of rep that has no line, and if lines are not
// sorted; err is non-nil if a line cannot be read or warcio's SURT
// could not be computed (see SURTs).
func ResolveRevisits(lines []string, rep *Report) (problems []string, err error) {
	parsed := make([]cdxjLine, len(lines))
	for i, s := range lines {
		j := strings.Index(s, " {")
		if j < 0 {
			return nil, fmt.Errorf("warccheck: resolve revisits: line %d %q: no JSON", i+1, s)
		}
		if err := json.Unmarshal([]byte(s[j+1:]), &parsed[i]); err != nil {
			return nil, fmt.Errorf("warccheck: resolve revisits: line %d %q: %w", i+1, s, err)
		}
		parsed[i].key = s[:j]
	}
	if !slices.IsSorted(lines) {
		problems = append(problems, "the CDXJ lines are not sorted: binary search cannot find captures")
	}
	type place struct {
		file   string
		offset string
	}
	records := make(map[place]Revisit, len(rep.Revisits))
	for _, r := range rep.Revisits {
		records[place{filepath.Base(r.File), strconv.FormatInt(r.Offset, 10)}] = r
	}
	var (
		revisits []int    // indexes of the revisit lines
		refers   []string // their records' WARC-Refers-To-Target-URI
	)
	seen := make(map[place]bool)
	for i, l := range parsed {
		if l.Mime != "warc/revisit" {
			continue
		}
		p := place{l.Filename, l.Offset}
		r, ok := records[p]
		if !ok {
			problems = append(problems, fmt.Sprintf("revisit line %q: warcio read no revisit record at %s offset %s", lines[i], l.Filename, l.Offset))
			continue
		}
		seen[p] = true
		revisits = append(revisits, i)
		refers = append(refers, r.RefersToURI)
	}
	for p, r := range records {
		if !seen[p] {
			problems = append(problems, fmt.Sprintf("revisit record of %s at %s offset %s has no CDXJ line", r.URI, p.file, p.offset))
		}
	}
	if len(revisits) == 0 {
		return problems, nil
	}
	surts, err := SURTs(refers...)
	if err != nil {
		return nil, err
	}
	for k, i := range revisits {
		l := parsed[i]
		r := records[place{l.Filename, l.Offset}]
		key := surts[k] + " " + cdxjTimestamp(r.RefersToDate)
		found := false
		for j, _ := slices.BinarySearchFunc(parsed, key, func(x cdxjLine, key string) int {
			return strings.Compare(x.key, key)
		}); j < len(parsed) && parsed[j].key == key; j++ {
			if parsed[j].Mime != "warc/revisit" && parsed[j].Digest == l.Digest {
				found = true
				break
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("revisit line %q (refers to %s at %s): no capture keyed %q with digest %s", lines[i], r.RefersToURI, r.RefersToDate, key, l.Digest))
		}
	}
	return problems, nil
}

// cdxjTimestamp is a WARC-Date as the 14 digits of a CDXJ key.
func cdxjTimestamp(date string) string {
	t := strings.NewReplacer("-", "", ":", "", "T", "").Replace(date)
	return t[:min(len(t), 14)]
}
