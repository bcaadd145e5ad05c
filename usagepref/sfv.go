package usagepref

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// This file parses an RFC 9651 Structured Field Dictionary (section
// 4.2.2), which is how draft-ietf-aipref-vocab-07 section 6 serialises a
// statement of preference. Only what the vocabulary needs is kept of each
// member (its key, the type of its value and a token's text); every other
// value is still parsed in full, because a syntax error anywhere fails the
// whole dictionary (RFC 9651 section 4.2: "fail parsing").

// itemKind is the type of a dictionary member's value.
type itemKind uint8

const (
	kindBoolean itemKind = iota // also a bare key with no value
	kindInteger
	kindDecimal
	kindString
	kindToken
	kindBytes
	kindDate
	kindDisplayString
	kindInnerList
)

// member is one dictionary member: the last value given for its key.
type member struct {
	key   string
	kind  itemKind
	token string // the token, if kind == kindToken
}

// maxMembers bounds the members of one dictionary (RFC 9651 section 3.2
// asks parsers to support at least 1024).
const maxMembers = 1024

var errSFV = errors.New("not a structured field dictionary")

// sfParser reads one field value.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", errSFV, p.i, fmt.Sprintf(format, args...))
}

func (p *sfParser) eof() bool { return p.i >= len(p.s) }

func (p *sfParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for !p.eof() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// parseDictionary parses a whole field value as a Dictionary. Members
// keep the order in which their keys first appear; a repeated key takes
// the later value in the earlier place (RFC 9651 section 4.2.2).
func parseDictionary(s string) ([]member, error) {
	p := &sfParser{s: s}
	p.skipSP()
	var out []member
	index := map[string]int{}
	for !p.eof() {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		m := member{key: key, kind: kindBoolean}
		if p.peek() == '=' {
			p.i++
			if p.peek() == '(' {
				if err := p.innerList(); err != nil {
					return nil, err
				}
				m.kind = kindInnerList
			} else {
				m.kind, m.token, err = p.bareItem()
				if err != nil {
					return nil, err
				}
				if err := p.parameters(); err != nil {
					return nil, err
				}
			}
		} else if err := p.parameters(); err != nil {
			return nil, err
		}
		if j, ok := index[key]; ok {
			out[j] = m
		} else {
			if len(out) >= maxMembers {
				return nil, p.fail("more than %d members", maxMembers)
			}
			index[key] = len(out)
			out = append(out, m)
		}
		p.skipOWS()
		if p.eof() {
			return out, nil
		}
		if p.peek() != ',' {
			return nil, p.fail("want ',' after a member")
		}
		p.i++
		p.skipOWS()
		if p.eof() {
			return nil, p.fail("trailing comma")
		}
	}
	return out, nil
}

func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool   { return '0' <= c && c <= '9' }

// key parses a key (RFC 9651 section 4.2.3.3).
func (p *sfParser) key() (string, error) {
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		return "", p.fail("a key starts with a-z or '*'")
	}
	start := p.i
	for !p.eof() {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

// parameters parses ";key[=value]"... (RFC 9651 section 4.2.3.2).
func (p *sfParser) parameters() error {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		if _, err := p.key(); err != nil {
			return err
		}
		if p.peek() == '=' {
			p.i++
			if _, _, err := p.bareItem(); err != nil {
				return err
			}
		}
	}
	return nil
}

// innerList parses "(item item ...)" and its parameters (4.2.1.2).
func (p *sfParser) innerList() error {
	p.i++ // '('
	for !p.eof() {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return p.parameters()
		}
		if _, _, err := p.bareItem(); err != nil {
			return err
		}
		if err := p.parameters(); err != nil {
			return err
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return p.fail("want SP or ')' in an inner list")
		}
	}
	return p.fail("unterminated inner list")
}

// bareItem parses one bare item (4.2.3.1) and returns its kind and, for a
// token, its text.
func (p *sfParser) bareItem() (itemKind, string, error) {
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		k, err := p.number()
		return k, "", err
	case c == '"':
		return kindString, "", p.str()
	case c == '*' || isAlpha(c):
		return kindToken, p.token(), nil
	case c == ':':
		return kindBytes, "", p.bytes()
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			p.i += 2
			return kindBoolean, "", nil
		}
		return 0, "", p.fail("bad boolean")
	case c == '@':
		p.i++
		k, err := p.number()
		if err == nil && k != kindInteger {
			err = p.fail("a date is an integer")
		}
		return kindDate, "", err
	case c == '%':
		return kindDisplayString, "", p.displayString()
	}
	return 0, "", p.fail("no item")
}

// number parses an Integer or Decimal (4.2.4).
func (p *sfParser) number() (itemKind, error) {
	if p.peek() == '-' {
		p.i++
	}
	if !isDigit(p.peek()) {
		return 0, p.fail("want a digit")
	}
	digits, frac, dot := 0, 0, false
	for !p.eof() {
		c := p.s[p.i]
		switch {
		case isDigit(c):
			if dot {
				frac++
			} else {
				digits++
			}
		case c == '.' && !dot:
			if digits > 12 {
				return 0, p.fail("decimal too long")
			}
			dot = true
		default:
			goto done
		}
		p.i++
		if !dot && digits > 15 || frac > 3 {
			return 0, p.fail("number too long")
		}
	}
done:
	if !dot {
		return kindInteger, nil
	}
	if frac == 0 {
		return 0, p.fail("decimal ends in '.'")
	}
	return kindDecimal, nil
}

// str parses a String (4.2.5).
func (p *sfParser) str() error {
	p.i++ // '"'
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.eof() || p.s[p.i] != '"' && p.s[p.i] != '\\' {
				return p.fail("bad escape")
			}
			p.i++
		case c == '"':
			return nil
		case c < 0x20 || c > 0x7e:
			return p.fail("bad octet in a string")
		}
	}
	return p.fail("unterminated string")
}

// token parses a Token (4.2.6); the first octet is already checked.
func (p *sfParser) token() string {
	start := p.i
	p.i++
	for !p.eof() && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return p.s[start:p.i]
}

// isTchar: RFC 9110 tchar.
func isTchar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// bytes parses a Byte Sequence (4.2.7).
func (p *sfParser) bytes() error {
	p.i++ // ':'
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == ':':
			return nil
		case isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=':
		default:
			return p.fail("bad octet in a byte sequence")
		}
	}
	return p.fail("unterminated byte sequence")
}

// displayString parses a Display String (4.2.10): %"..." with lower-case
// percent escapes of valid UTF-8.
func (p *sfParser) displayString() error {
	p.i++ // '%'
	if p.peek() != '"' {
		return p.fail("want '\"' after '%%'")
	}
	p.i++
	var buf []byte
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '%':
			if p.i+2 > len(p.s) || !isLowerHex(p.s[p.i]) || !isLowerHex(p.s[p.i+1]) {
				return p.fail("bad escape in a display string")
			}
			buf = append(buf, unhexLower(p.s[p.i])<<4|unhexLower(p.s[p.i+1]))
			p.i += 2
		case c == '"':
			if !utf8.Valid(buf) {
				return p.fail("display string is not UTF-8")
			}
			return nil
		case c < 0x20 || c > 0x7e:
			return p.fail("bad octet in a display string")
		default:
			buf = append(buf, c)
		}
	}
	return p.fail("unterminated display string")
}

func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

func unhexLower(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c - 'a' + 10
}
