// Package warccheck validates WARC files independently of the Go code that
// wrote them, by running tools/warcvalidate/validate.mjs (the npm package
// warcio) under Node and decoding its JSON report. It is a test helper: it
// needs node on PATH and `npm ci --prefix tools/warcvalidate` run once. It
// holds no state and is safe for concurrent use.
package warccheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// with profile the identical-payload-digest one and WARC-Refers-To set.
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
