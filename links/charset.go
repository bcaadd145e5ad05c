package links

import (
	"bytes"
	"encoding/binary"
	"io"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// prescanBytes is how far into a document a <meta> may declare its
// encoding (WHATWG HTML §13.2.3.2, "prescan a byte stream"), and how far
// charset.DetermineEncoding looks.
const prescanBytes = 1024

// Decode returns the text of an HTML document in UTF-8, and the WHATWG name
// of the encoding it was read in, chosen as a browser chooses it (WHATWG
// HTML §13.2.3, "determining the character encoding", by way of
// golang.org/x/net/html/charset.DetermineEncoding):
//
//  1. a byte order mark (UTF-8, UTF-16LE or UTF-16BE), which is not part
//     of the text;
//  2. else the charset parameter of contentType, if it is a known label
//     ("utf-16" is UTF-16LE);
//  3. else a <meta charset> or <meta http-equiv=content-type> in the first
//     1024 bytes (a UTF-16 label there means UTF-8);
//  4. else, with nothing declared: UTF-8 if the body is valid UTF-8 (what
//     browsers' encoding detectors conclude of such bytes), windows-1252
//     otherwise (WHATWG's default for an undeclared page).
//
// Most pages cost no copy: a UTF-8 body is returned as it is (invalid
// sequences included: the tokenizer and the URL parser take them as they
// are), and so is an ASCII body in an encoding that maps ASCII to itself.
// Otherwise the text is a new slice of at most 3 bytes for each byte of
// body; malformed sequences become U+FFFD. Reader gives the same text
// without holding it whole.
func Decode(body []byte, contentType string) (text []byte, encoding string) {
	dec, rest, name := choose(body, contentType)
	if dec == nil {
		return rest, name
	}
	text, err := dec.Bytes(rest)
	if err != nil {
		// The WHATWG decoders replace what they cannot read, so this
		// is not expected; the bytes as they are are the next best text.
		return rest, name
	}
	return text, name
}

// Reader is Decode's text as a reader over body that converts as it is
// read, holding a few KiB whatever the size of body.
func Reader(body []byte, contentType string) (text io.Reader, encoding string) {
	text1, converted, name := source(body, contentType)
	if converted != nil {
		return converted, name
	}
	return bytes.NewReader(text1), name
}

// source is Decode's text without a copy of body: either body's bytes
// that are the text in UTF-8 already (text), or a reader that converts
// body as it is read (converted); ExtractWith reads pages so.
func source(body []byte, contentType string) (text []byte, converted io.Reader, encoding string) {
	dec, rest, name := choose(body, contentType)
	if dec == nil {
		return rest, nil, name
	}
	return nil, transform.NewReader(bytes.NewReader(rest), dec), name
}

// choose returns the decoder of body's encoding (Decode's order) and
// body without its byte order mark, or a nil decoder if those bytes are
// the text in UTF-8 already.
func choose(body []byte, contentType string) (dec *encoding.Decoder, rest []byte, name string) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	body = body[bomLen(body):] // a BOM, if any, chose the encoding
	switch {
	case name == "utf-8", len(body) == 0:
		return nil, body, name
	case asciiCompatible(name) && isASCII(body):
		return nil, body, name
	case !certain && name == "windows-1252" && utf8.Valid(body) &&
		!containsFold(body[:min(len(body), prescanBytes)], "charset"):
		// Nothing declared the encoding (a <meta> that could would name
		// "charset"), and the first 1024 bytes, which DetermineEncoding
		// judged, are ASCII; the rest is valid UTF-8.
		return nil, body, "utf-8"
	}
	return enc.NewDecoder(), body, name
}

// bomLen returns the length of the byte order mark body starts with, or 0.
func bomLen(body []byte) int {
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return 3
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}), bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return 2
	}
	return 0
}

// asciiCompatible reports whether the encoding named name (a WHATWG name)
// decodes every byte below 0x80 to the same code point. Of the WHATWG
// encodings, only UTF-16, ISO-2022-JP (whose escapes switch character
// sets) and replacement (which decodes a document to one U+FFFD) do not.
func asciiCompatible(name string) bool {
	switch name {
	case "utf-16le", "utf-16be", "iso-2022-jp", "replacement":
		return false
	}
	return true
}

// isASCII reports whether every byte of b is below 0x80.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// containsFold reports whether b contains the lower-case ASCII word s,
// ignoring ASCII case.
func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if equivFold(b[i:i+len(s)], s) {
			return true
		}
	}
	return false
}
