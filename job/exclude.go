package job

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Bounds of a job's exclusion patterns.
const (
	MaxExclusions       = 1000
	MaxExclusionPattern = 1024 // bytes
)

// Exclusions is a job's set of URL exclusion patterns: regular expressions
// (Go's RE2 syntax, which runs in time linear in the URL, so a pattern
// cannot be made to hang the crawl) matched anywhere in a canonical URL
// unless anchored. A URL that any pattern matches is not fetched: links are
// dropped as they are found, queued URLs as they are leased. The zero
// value excludes nothing. An Exclusions is immutable; share it freely.
type Exclusions struct {
	patterns []string
	re       *regexp.Regexp // the patterns as one alternation; nil if none
}

// CompileExclusions checks and compiles patterns (in their order, without
// duplicates). Errors are *FieldError values for "Exclude" naming the
// pattern's index.
func CompileExclusions(patterns []string) (*Exclusions, error) {
	if err := checkPatterns("Exclude", patterns); err != nil {
		return nil, err
	}
	return compile(patterns)
}

// checkPatterns checks each pattern alone; errors name field[i].
func checkPatterns(field string, patterns []string) error {
	if len(patterns) > MaxExclusions {
		return &FieldError{field, -1, fmt.Sprintf("%d patterns: want at most %d", len(patterns), MaxExclusions)}
	}
	var errs []error
	for i, p := range patterns {
		bad := func(why string) {
			errs = append(errs, &FieldError{field, i, fmt.Sprintf("%.40q %s", p, why)})
		}
		switch {
		case p == "":
			bad("is empty: it would exclude every URL")
		case len(p) > MaxExclusionPattern:
			bad(fmt.Sprintf("is %d bytes: want at most %d", len(p), MaxExclusionPattern))
		default:
			if _, err := regexp.Compile(p); err != nil {
				bad("is not a regular expression (RE2 syntax): " + strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
		}
	}
	return errors.Join(errs...)
}

// compile builds the set of checked patterns.
func compile(patterns []string) (*Exclusions, error) {
	if len(patterns) > MaxExclusions {
		return nil, &FieldError{"Exclude", -1, fmt.Sprintf("%d patterns: want at most %d", len(patterns), MaxExclusions)}
	}
	x := &Exclusions{}
	for _, p := range patterns {
		if !slices.Contains(x.patterns, p) {
			x.patterns = append(x.patterns, p)
		}
	}
	if len(x.patterns) == 0 {
		return x, nil
	}
	var b strings.Builder
	for i, p := range x.patterns {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString("(?:" + p + ")")
	}
	re, err := regexp.Compile(b.String())
	if err != nil { // each part compiled alone; the whole may still be too big
		return nil, &FieldError{"Exclude", -1, fmt.Sprintf("the %d patterns together: %v", len(x.patterns), err)}
	}
	x.re = re
	return x, nil
}

// Patterns returns the patterns, in order.
func (x *Exclusions) Patterns() []string {
	if x == nil {
		return nil
	}
	return slices.Clone(x.patterns)
}

// Excludes reports whether a pattern matches url.
func (x *Exclusions) Excludes(url string) bool {
	return x != nil && x.re != nil && x.re.MatchString(url)
}

// Edit returns the set with add appended (those not already in it) and
// remove taken out. Errors are *FieldError values for "Add" or "Remove"
// naming the pattern's index; removing a pattern that is not there is one,
// so that a typo is not silently ignored.
func (x *Exclusions) Edit(add, remove []string) (*Exclusions, error) {
	if err := checkPatterns("Add", add); err != nil {
		return nil, err
	}
	cur := x.Patterns()
	var errs []error
	for i, p := range remove {
		j := slices.Index(cur, p)
		if j < 0 {
			errs = append(errs, &FieldError{"Remove", i, fmt.Sprintf("%.40q is not an exclusion of this crawl", p)})
			continue
		}
		cur = slices.Delete(cur, j, j+1)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return compile(append(cur, add...))
}
