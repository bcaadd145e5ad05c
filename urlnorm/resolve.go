package urlnorm

import (
	"errors"
	"fmt"
	"net/url"
)

// ResolveReference resolves ref against base by the strict rules of RFC 3986
// section 5 (for references outside HTML, such as a Location header or a
// sitemap entry). base must be absolute. The result may have any scheme
// ("g:h" resolves to itself); callers that fetch it check the scheme, and
// Normalize it for seen-checks.
func ResolveReference(base *url.URL, ref string) (*url.URL, error) {
	if base == nil || !base.IsAbs() {
		b := ""
		if base != nil {
			b = base.String()
		}
		return nil, &Error{Op: "resolve", URL: ref, Err: fmt.Errorf("base %q is not an absolute URL", b)}
	}
	r, err := url.Parse(ref)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &Error{Op: "resolve", URL: ref, Err: err}
	}
	return base.ResolveReference(r), nil
}
