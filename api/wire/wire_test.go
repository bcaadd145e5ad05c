package wire

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"
)

// schema is the part of an OpenAPI schema object this test reads.
type schema struct {
	Ref        string             `yaml:"$ref"`
	Type       string             `yaml:"type"`
	Required   []string           `yaml:"required"`
	Properties map[string]*schema `yaml:"properties"`
	Items      *schema            `yaml:"items"`
	AllOf      []*schema          `yaml:"allOf"`
}

func loadSchemas(t *testing.T) map[string]*schema {
	t.Helper()
	b, err := os.ReadFile("../../docs/api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]*schema `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	return doc.Components.Schemas
}

// resolve follows s's $ref and merges its allOf into one object schema.
func resolve(t *testing.T, all map[string]*schema, s *schema) *schema {
	t.Helper()
	if s.Ref != "" {
		name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
		if !ok || all[name] == nil {
			t.Fatalf("unresolved $ref %q", s.Ref)
		}
		return resolve(t, all, all[name])
	}
	if len(s.AllOf) == 0 {
		return s
	}
	out := &schema{Type: "object", Properties: map[string]*schema{}}
	for _, part := range s.AllOf {
		p := resolve(t, all, part)
		out.Required = append(out.Required, p.Required...)
		for k, v := range p.Properties {
			out.Properties[k] = v
		}
	}
	return out
}

// jsonField is one field a struct encodes: its JSON name, whether it is
// left out when empty, and its type.
type jsonField struct {
	name      string
	omitEmpty bool
	typ       reflect.Type
}

// jsonFields lists the fields t encodes as encoding/json does: the
// fields of an untagged embedded struct come in its place, and a name met
// nearer the top hides the same name deeper down.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	seen := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		var embedded []reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				embedded = append(embedded, f.Type)
				continue
			}
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			o := strings.Split(opts, ",")
			out = append(out, jsonField{name, slices.Contains(o, "omitempty") || slices.Contains(o, "omitzero"), f.Type})
		}
		for _, e := range embedded {
			walk(e)
		}
	}
	walk(t)
	return out
}

// check compares Go type typ with schema s at path: the same property
// names both ways, and every required property always written; object
// properties and array items are compared in turn.
func check(t *testing.T, errorf func(string, ...any), all map[string]*schema, path string, typ reflect.Type, s *schema) {
	t.Helper()
	s = resolve(t, all, s)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() != reflect.Uint8:
		if s.Items != nil {
			check(t, errorf, all, path+"[]", typ.Elem(), s.Items)
		}
		return
	case typ.Kind() != reflect.Struct || typ == reflect.TypeFor[time.Time]() || len(s.Properties) == 0:
		return // a scalar, a map, raw JSON, or a free-form object
	}
	fields := jsonFields(typ)
	names := map[string]jsonField{}
	for _, f := range fields {
		names[f.name] = f
		if s.Properties[f.name] == nil {
			errorf("%s: %s has JSON field %q, which the schema does not have", path, typ, f.name)
		}
	}
	for name := range s.Properties {
		if _, ok := names[name]; !ok {
			errorf("%s: the schema has property %q, which %s does not", path, name, typ)
		}
	}
	for _, name := range s.Required {
		if f, ok := names[name]; ok && f.omitEmpty {
			errorf("%s: %s.%s is left out when empty, but the schema requires it", path, typ, name)
		}
	}
	for _, f := range fields {
		if p := s.Properties[f.name]; p != nil {
			check(t, errorf, all, path+"."+f.name, f.typ, p)
		}
	}
}

// TestTypesMatchSchemas: each wire type has the properties of its schema
// in docs/api/openapi.yaml, no other JSON field, and writes every
// required one; so do the objects nested in them.
func TestTypesMatchSchemas(t *testing.T) {
	all := loadSchemas(t)
	for _, c := range []struct {
		typ    reflect.Type
		schema string
	}{
		{reflect.TypeFor[Error](), "Error"},
		{reflect.TypeFor[Status](), "Status"},
		{reflect.TypeFor[CrawlRequest](), "CrawlRequest"},
		{reflect.TypeFor[Recrawl](), "Recrawl"},
		{reflect.TypeFor[Freshness](), "Freshness"},
		{reflect.TypeFor[Created](), "Created"},
		{reflect.TypeFor[Crawl](), "Crawl"},
		{reflect.TypeFor[CrawlList](), "CrawlList"},
		{reflect.TypeFor[Stats](), "Stats"},
		{reflect.TypeFor[Waiting](), "Waiting"},
		{reflect.TypeFor[Seeds](), "Seeds"},
		{reflect.TypeFor[SeedsAdded](), "SeedsAdded"},
		{reflect.TypeFor[ExclusionEdit](), "ExclusionEdit"},
		{reflect.TypeFor[Exclusions](), "Exclusions"},
		{reflect.TypeFor[Policy](), "Policy"},
		{reflect.TypeFor[PolicySet](), "PolicySet"},
		{reflect.TypeFor[Host](), "HostSummary"},
		{reflect.TypeFor[HostPage](), "HostPage"},
		{reflect.TypeFor[HostDetail](), "HostDetail"},
		{reflect.TypeFor[Nodes](), "Nodes"},
		{reflect.TypeFor[NodeState](), "NodeState"},
		{reflect.TypeFor[NodeStats](), "NodeStats"},
	} {
		s := all[c.schema]
		if s == nil {
			t.Errorf("openapi.yaml has no schema %s (for %s)", c.schema, c.typ)
			continue
		}
		check(t, t.Errorf, all, c.schema, c.typ, s)
	}
}

// TestCheckFindsMismatches: the check above fails a type with a field
// the schema lacks, a property the type lacks, and a required property
// left out when empty.
func TestCheckFindsMismatches(t *testing.T) {
	all := map[string]*schema{"S": {Type: "object", Required: []string{"a"}, Properties: map[string]*schema{"a": {Type: "integer"}, "b": {Type: "string"}}}}
	type extra struct {
		A int    `json:"a"`
		B string `json:"b"`
		C int    `json:"c"`
	}
	type missing struct {
		A int `json:"a"`
	}
	type optional struct {
		A int    `json:"a,omitempty"`
		B string `json:"b"`
	}
	type exact struct {
		A int    `json:"a"`
		B string `json:"b,omitempty"`
	}
	for _, c := range []struct {
		typ  reflect.Type
		fail bool
	}{{reflect.TypeFor[extra](), true}, {reflect.TypeFor[missing](), true}, {reflect.TypeFor[optional](), true}, {reflect.TypeFor[exact](), false}} {
		failed := false
		check(t, func(string, ...any) { failed = true }, all, "S", c.typ, all["S"])
		if failed != c.fail {
			t.Errorf("check(%s) failed = %v, want %v", c.typ, failed, c.fail)
		}
	}
}
