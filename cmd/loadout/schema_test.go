package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/internal/contract"
)

// schema is the subset of JSON Schema that docs/manifest.schema.json uses.
type schema struct {
	Ref        string             `json:"$ref"`
	Type       string             `json:"type"`
	Required   []string           `json:"required"`
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	Enum       []any              `json:"enum"`
	Const      any                `json:"const"`
	Pattern    string             `json:"pattern"`
	Defs       map[string]*schema `json:"$defs"`
}

// validate checks v against s structurally: types, required properties,
// items, enums, consts, patterns, following $refs into root's $defs.
func (s *schema) validate(root *schema, v any, at string) []string {
	if s.Ref != "" {
		return root.Defs[strings.TrimPrefix(s.Ref, "#/$defs/")].validate(root, v, at)
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	if s.Const != nil && v != s.Const {
		fail("want %v, got %v", s.Const, v)
	}
	if s.Enum != nil && !slices.Contains(s.Enum, v) {
		fail("%v is not one of %v", v, s.Enum)
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			fail("want an object")
			return errs
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				fail("missing required %q", r)
			}
		}
		for k, sub := range s.Properties {
			if pv, ok := m[k]; ok {
				errs = append(errs, sub.validate(root, pv, at+"."+k)...)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			fail("want an array")
			return errs
		}
		for i, e := range a {
			errs = append(errs, s.Items.validate(root, e, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("want a string")
		} else if s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(str) {
			fail("%q does not match %s", str, s.Pattern)
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			fail("want an integer")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("want a boolean")
		}
	}
	return errs
}

func TestManifestSchema_GoldenManifestIsValid(t *testing.T) { // docs/manifest.schema.json
	raw, err := os.ReadFile("../../docs/manifest.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/samples.configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(golden, &cm); err != nil {
		t.Fatal(err)
	}
	var manifest any
	if err := json.Unmarshal([]byte(cm.Data[contract.KeyManifest]), &manifest); err != nil {
		t.Fatal(err)
	}
	if errs := s.validate(&s, manifest, "manifest"); len(errs) > 0 {
		t.Fatalf("golden manifest.json breaks the schema:\n%s", strings.Join(errs, "\n"))
	}
	// The validator itself must catch a broken document.
	delete(manifest.(map[string]any), "catalog")
	manifest.(map[string]any)["hash"] = "md5:x"
	if errs := s.validate(&s, manifest, "manifest"); len(errs) != 2 {
		t.Fatalf("broken manifest: errors = %v, want 2", errs)
	}
}
