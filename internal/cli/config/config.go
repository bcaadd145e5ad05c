// Package config reads trawl's optional config file and layers the
// settings of one subcommand. A flag given on the command line wins over
// its environment variable, which wins over the config file, which wins
// over the flag's built-in default; the layering happens in one place,
// Apply, after the command line is parsed.
//
// The file is one JSON object. Its keys are sections: a subcommand's path
// ("crawl", "serve", "crawls create") or a group of subcommands ("crawls",
// "bench"), whose values every subcommand under it takes unless its own
// section sets the key too. A section maps flag names, without dashes, to a
// string, number or boolean, or, for a repeatable flag, a list of them:
//
//	{
//	  "serve":  {"data": "/srv/trawl", "min-delay": "2s"},
//	  "crawls": {"server": "http://127.0.0.1:8420", "data": "/srv/trawl"},
//	  "crawl":  {"domain": ["example.org", "example.net"], "max-depth": 5}
//	}
//
// Loading is strict: malformed JSON, a duplicate key, an unknown section, a
// key that is no flag of the section's subcommands, and a value such a flag
// refuses are errors naming the file, the line and the key. Nothing here
// keeps global state; a File is read-only once parsed and safe for
// concurrent use.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// File is a parsed config file.
type File struct {
	path     string
	sections map[string]*section
	order    []string // section names in file order
}

type section struct {
	line  int
	keys  map[string]*entry
	order []string // keys in file order
}

// entry is one key's value: its text form(s), as a flag's Set takes them.
type entry struct {
	line   int
	values []string
	list   bool // written as a JSON list
}

// Path is the file's name, as errors give it.
func (f *File) Path() string { return f.path }

// Load reads and parses the config file at path.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, b)
}

// Parse parses a config file's contents; path is only used in errors.
func Parse(path string, data []byte) (*File, error) {
	p := &parser{f: &File{path: path, sections: map[string]*section{}}, data: data,
		dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	if err := p.file(); err != nil {
		return nil, err
	}
	return p.f, nil
}

type parser struct {
	f    *File
	data []byte
	dec  *json.Decoder
}

// line is the line the decoder has read up to.
func (p *parser) line() int {
	off := min(int(p.dec.InputOffset()), len(p.data))
	return 1 + bytes.Count(p.data[:off], []byte("\n"))
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("config: %s:%d: %s", p.f.path, line, fmt.Sprintf(format, args...))
}

// token reads the next token; a syntax error names its line.
func (p *parser) token() (json.Token, error) {
	t, err := p.dec.Token()
	if err == nil {
		return t, nil
	}
	line := p.line()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line = 1 + bytes.Count(p.data[:min(int(se.Offset), len(p.data))], []byte("\n"))
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = io.ErrUnexpectedEOF
		line = 1 + bytes.Count(p.data, []byte("\n"))
	}
	return nil, p.errorf(line, "malformed JSON: %v", err)
}

func (p *parser) file() error {
	t, err := p.token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return p.errorf(p.line(), "want a JSON object of sections, e.g. {\"crawl\": {\"min-delay\": \"2s\"}}")
	}
	for p.dec.More() {
		t, err := p.token()
		if err != nil {
			return err
		}
		name, line := t.(string), p.line()
		if _, dup := p.f.sections[name]; dup {
			return p.errorf(line, "section %q appears twice", name)
		}
		s := &section{line: line, keys: map[string]*entry{}}
		if err := p.section(name, s); err != nil {
			return err
		}
		p.f.sections[name] = s
		p.f.order = append(p.f.order, name)
	}
	if _, err := p.token(); err != nil { // the closing brace
		return err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return p.errorf(p.line(), "more after the object that holds the sections")
	}
	return nil
}

func (p *parser) section(name string, s *section) error {
	t, err := p.token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return p.errorf(p.line(), "section %q: want an object of flag names and values", name)
	}
	for p.dec.More() {
		t, err := p.token()
		if err != nil {
			return err
		}
		key, line := t.(string), p.line()
		if _, dup := s.keys[key]; dup {
			return p.errorf(line, "%s.%s appears twice", name, key)
		}
		e := &entry{line: line}
		if err := p.value(name+"."+key, e); err != nil {
			return err
		}
		s.keys[key] = e
		s.order = append(s.order, key)
	}
	_, err = p.token()
	return err
}

// value reads a scalar, or a list of scalars, into e.
func (p *parser) value(key string, e *entry) error {
	t, err := p.token()
	if err != nil {
		return err
	}
	if t == json.Delim('[') {
		e.list = true
		for p.dec.More() {
			t, err := p.token()
			if err != nil {
				return err
			}
			v, ok := scalar(t)
			if !ok {
				return p.errorf(p.line(), "%s: a list may hold strings, numbers and booleans only", key)
			}
			e.values = append(e.values, v)
		}
		_, err := p.token()
		return err
	}
	v, ok := scalar(t)
	if !ok {
		return p.errorf(p.line(), "%s: want a string, number, boolean or list, not %v", key, describe(t))
	}
	e.values = []string{v}
	return nil
}

func scalar(t json.Token) (string, bool) {
	switch v := t.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

func describe(t json.Token) string {
	switch t {
	case nil:
		return "null"
	case json.Delim('{'):
		return "an object"
	}
	return fmt.Sprint(t)
}

// Repeatable is a flag.Value that collects every value it is given (a
// flag given more than once); in the file it takes a list. Only such flags
// take lists.
type Repeatable interface {
	flag.Value
	IsRepeatable() bool
}

func repeatable(f *flag.Flag) bool {
	r, ok := f.Value.(Repeatable)
	return ok && r.IsRepeatable()
}

// Check validates the whole file against the subcommands' flags, so that
// a mistake in any section is found whichever subcommand runs. leaves maps
// each subcommand's path ("crawl", "crawls create") to a function that
// registers its flags on a FlagSet. Every section must be a leaf's path or
// a group of leaves (a prefix of paths, whole words); every key a flag of a
// leaf under it that the file may set (not one of except, such as the
// flag naming the config file itself); every value one that flag accepts.
func (f *File) Check(leaves map[string]func(*flag.FlagSet), except ...string) error {
	var errs []error
	for _, name := range f.order {
		s := f.sections[name]
		var sets []*flag.FlagSet
		for _, path := range sortedKeys(leaves) {
			if path == name || strings.HasPrefix(path, name+" ") {
				fs := flag.NewFlagSet(path, flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				leaves[path](fs)
				sets = append(sets, fs)
			}
		}
		if len(sets) == 0 {
			errs = append(errs, fmt.Errorf("config: %s:%d: unknown section %q: want one of %s",
				f.path, s.line, name, strings.Join(sectionNames(leaves), ", ")))
			continue
		}
		for _, key := range s.order {
			e := s.keys[key]
			at := fmt.Sprintf("config: %s:%d: %s.%s", f.path, e.line, name, key)
			if slices.Contains(except, key) {
				errs = append(errs, fmt.Errorf("%s: --%s cannot be set in the config file", at, key))
				continue
			}
			found := false
			for _, fs := range sets {
				fl := fs.Lookup(key)
				if fl == nil {
					continue
				}
				found = true
				if err := set(fs, fl, e.values, e.list); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", at, err))
					break
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("%s: unknown key: %q is not a flag of trawl %s", at, key, name))
			}
		}
	}
	return errors.Join(errs...)
}

// sectionNames lists every name a section may have: each leaf's path and
// each group above it.
func sectionNames(leaves map[string]func(*flag.FlagSet)) []string {
	seen := map[string]bool{}
	for path := range leaves {
		words := strings.Fields(path)
		for i := range words {
			seen[strings.Join(words[:i+1], " ")] = true
		}
	}
	return sortedKeys(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// set gives fl its values, through the flag set's own Set (as the command
// line would).
func set(fs *flag.FlagSet, fl *flag.Flag, values []string, list bool) error {
	if list && !repeatable(fl) {
		return fmt.Errorf("a list, but --%s takes one value", fl.Name)
	}
	for _, v := range values {
		if err := fs.Set(fl.Name, v); err != nil {
			return fmt.Errorf("%q: %w%s", v, err, want(fl))
		}
	}
	return nil
}

// want says what a flag of a standard type takes, since the flag package's
// own errors for them say only "parse error".
func want(fl *flag.Flag) string {
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		return " (want a duration such as \"1.5s\" or \"10m\")"
	case int, int64, uint, uint64:
		return " (want an integer)"
	case float64:
		return " (want a number)"
	case bool:
		return " (want true or false)"
	}
	return ""
}

// Source says where a setting's value came from.
type Source int

const (
	Default Source = iota // the flag's built-in default
	FromFile
	FromEnv
	FromFlag // the command line
)

func (s Source) String() string {
	switch s {
	case FromFile:
		return "config file"
	case FromEnv:
		return "environment"
	case FromFlag:
		return "command line"
	}
	return "default"
}

// Layers say where a subcommand's settings come from besides its command
// line.
type Layers struct {
	// Sections are the subcommand's sections of File, the most general
	// first ("crawls", then "crawls create"); a later one wins.
	Sections []string
	// File is the config file. Nil: none.
	File *File
	// Env maps a flag's name to its environment variable. A flag without
	// one takes no value from the environment; a variable that is empty
	// counts as unset. A repeatable flag's variable holds a
	// comma-separated list.
	Env map[string]string
	// Getenv reads the environment. Nil means os.Getenv.
	Getenv func(string) string
}

// Apply gives every flag of fs that its command line did not set (fs has
// been parsed) the value of its environment variable, if set, or else of
// the file's most specific section that has it. Keys of those sections
// that are not flags of fs are skipped: they belong to other subcommands
// of a group, and Check has vetted them. It returns each flag's source.
func Apply(fs *flag.FlagSet, l Layers) (map[string]Source, error) {
	getenv := l.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	src := map[string]Source{}
	fs.VisitAll(func(f *flag.Flag) { src[f.Name] = Default })
	fs.Visit(func(f *flag.Flag) { src[f.Name] = FromFlag })
	var errs []error
	fs.VisitAll(func(fl *flag.Flag) {
		if src[fl.Name] == FromFlag {
			return
		}
		if name := l.Env[fl.Name]; name != "" {
			if v := getenv(name); v != "" {
				values := []string{v}
				if repeatable(fl) {
					values = strings.Split(v, ",")
				}
				if err := set(fs, fl, values, false); err != nil {
					errs = append(errs, fmt.Errorf("config: environment %s: %w", name, err))
				}
				src[fl.Name] = FromEnv
				return
			}
		}
		if l.File == nil {
			return
		}
		for _, sec := range slices.Backward(l.Sections) {
			s := l.File.sections[sec]
			if s == nil {
				continue
			}
			if e := s.keys[fl.Name]; e != nil {
				if err := set(fs, fl, e.values, e.list); err != nil {
					errs = append(errs, fmt.Errorf("config: %s:%d: %s.%s: %w", l.File.path, e.line, sec, fl.Name, err))
				}
				src[fl.Name] = FromFile
				return
			}
		}
	})
	return src, errors.Join(errs...)
}
