package urlnorm

import "fmt"

// Error reports a URL that could not be parsed or resolved. Op names the
// operation ("parse", "resolve"), URL the input as given.
type Error struct {
	Op  string
	URL string
	Err error
}

// Error returns a message like `urlnorm: parse "xx": reason`.
func (e *Error) Error() string {
	return fmt.Sprintf("urlnorm: %s %q: %v", e.Op, e.URL, e.Err)
}

// Unwrap returns the underlying reason.
func (e *Error) Unwrap() error { return e.Err }

// reason is a short error message that keeps the library's verbose error as
// its cause, for errors.As and errors.Is.
type reason struct {
	msg   string
	cause error
}

func (r *reason) Error() string { return r.msg }
func (r *reason) Unwrap() error { return r.cause }
