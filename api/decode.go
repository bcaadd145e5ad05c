package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// decodeBody reads a JSON body into v, a pointer to a struct whose fields
// may hold defaults (a key the body leaves out keeps its value): at most
// MaxBodyBytes, one JSON object, every key one of v's (by its json tag,
// exactly) with a value of its type or null (taken as the key left out). On failure it returns the status, the
// JSON path at fault ("scope.max_depth", "seeds[1]"; "" for the body as a
// whole) and a message in the request's words that starts with that path
// (or "body"). Nothing is written to v unless the whole body fits it.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) (code int, field, msg string) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "", fmt.Sprintf("body: over %d bytes", MaxBodyBytes)
	case err != nil:
		return http.StatusBadRequest, "", fmt.Sprintf("body: %v", err)
	}
	path, msg := checkBody(raw, reflect.TypeOf(v).Elem())
	if msg != "" {
		return http.StatusBadRequest, path, msg
	}
	if err := json.Unmarshal(raw, v); err != nil { // checkBody let it through: it fits
		return http.StatusBadRequest, "", fmt.Sprintf("body: %v", err)
	}
	return 0, "", ""
}

// checkBody checks that raw is one JSON object that fits t, and returns
// the path at fault and a message, or "" and "".
func checkBody(raw []byte, t reflect.Type) (path, msg string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		var syntax *json.SyntaxError
		switch {
		case errors.Is(err, io.EOF):
			return "", "body: empty: want a JSON object"
		case errors.As(err, &syntax):
			return "", fmt.Sprintf("body: malformed JSON at byte %d: %v", syntax.Offset, err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return "", fmt.Sprintf("body: malformed JSON at byte %d: unexpected end of JSON input", len(raw))
		}
		return "", fmt.Sprintf("body: malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", "body: more than one JSON value"
	}
	return fits(tree, t, "")
}

// fits checks the decoded JSON value v (numbers as json.Number) against
// the Go type t that encoding/json would decode it into, at path.
func fits(v any, t reflect.Type, path string) (string, string) {
	at := path
	if at == "" {
		at = "body"
	}
	if v == nil && path != "" {
		return "", "" // null: as if the key were left out
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	wrong := func() (string, string) {
		want := wants(t)
		if path == "" {
			want = "a JSON object"
		}
		return path, fmt.Sprintf("%s: want %s, got %s", at, want, describe(v))
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(mapKeys(obj)) {
			f, ok := fields[k]
			if !ok {
				return join(path, k), fmt.Sprintf("%s: unknown field%s", join(path, k), suggest(path, k, fields))
			}
			if p, m := fits(obj[k], f.Type, join(path, k)); m != "" {
				return p, m
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return wrong()
		}
		for i, e := range arr {
			if p, m := fits(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); m != "" {
				return p, m
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return wrong()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return wrong()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return wrong()
		}
		if _, err := strconv.ParseInt(n.String(), 10, t.Bits()); err != nil {
			return wrong()
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return wrong()
		}
		if _, err := strconv.ParseUint(n.String(), 10, t.Bits()); err != nil {
			return wrong()
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return wrong()
		}
		if _, err := strconv.ParseFloat(n.String(), t.Bits()); err != nil {
			return wrong()
		}
	case reflect.Map, reflect.Interface:
		// any JSON value decodes into these
	default:
		return path, fmt.Sprintf("%s: cannot be set", at)
	}
	return "", ""
}

// jsonFields maps the JSON names of t's fields (a struct) to them, as
// encoding/json names them: the json tag's name, or the Go name; "-"
// and unexported fields left out; embedded structs' fields lifted.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || f.Anonymous && f.Type.Kind() == reflect.Struct && name == "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// suggest names the key meant instead of k, if one is near (a letter or
// two away, or one a prefix of the other), or else lists the keys.
func suggest(path, k string, fields map[string]reflect.StructField) string {
	names := slices.Sorted(mapKeys(fields))
	best, bestD := "", 3
	for _, n := range names {
		lk := strings.ToLower(k)
		d := distance(lk, n)
		if len(lk) >= 3 && (strings.HasPrefix(n, lk) || strings.HasPrefix(lk, n)) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %s?)", join(path, best))
	}
	return ": want one of " + strings.Join(names, ", ")
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// join is the path of key k of the object at path: "scope.domains", or,
// for a key that is empty or has characters a path uses, `scope["a.b"]`.
func join(path, k string) string {
	if k == "" || strings.ContainsAny(k, ".[]\" \t\n") {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// wants says what a value of t is, in JSON's words.
func wants(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return wants(t.Elem())
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.String:
			return "an array of strings"
		case reflect.Struct:
			return "an array of objects"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a JSON value"
}

// describe names a decoded JSON value: its kind, or a number itself.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		if len(v) > 24 {
			return "a number of " + strconv.Itoa(len(v)) + " characters"
		}
		return v.String()
	}
	return fmt.Sprintf("%T", v)
}
