package vocab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestLimits_MatchTheGeneratedCRDSchemas reads the generated CRDs in
// config/crd/bases and checks that every marker repeating a limit of
// limits.go says the same number, so that admission, the resolver and
// `loadout import` enforce one limit.
func TestLimits_MatchTheGeneratedCRDSchemas(t *testing.T) {
	for _, tc := range []struct {
		crd, path, keyword string
		want               int64
	}{
		{"skills", "spec.name", "maxLength", MaxLogicalNameLength},
		{"templates", "spec.name", "maxLength", MaxLogicalNameLength},
		{"extensions", "spec.name", "maxLength", MaxLogicalNameLength},
		{"skills", "spec.description", "maxLength", MaxDescriptionLength},
		{"skills", "spec.body", "maxLength", MaxSkillTextLength},
		{"skills", "spec.files", "maxItems", MaxSkillFiles},
		{"skills", "spec.files[].path", "maxLength", MaxSkillFilePathLength},
		{"skills", "spec.files[].content", "maxLength", MaxSkillTextLength},
		{"skills", "spec.license", "maxLength", MaxLicenseLength},
		{"skills", "spec.compatibility", "maxLength", MaxCompatibilityLength},
		{"skills", "spec.metadata", "maxProperties", MaxMetadataEntries},
		{"skills", "spec.allowedTools", "maxItems", MaxAllowedTools},
		{"skills", "spec.allowedTools[]", "maxLength", MaxAllowedToolLength},
		{"extensions", "spec.hooks[].timeoutSeconds", "default", DefaultHookTimeoutSeconds},
		{"extensions", "spec.hooks[].timeoutSeconds", "maximum", MaxHookTimeoutSeconds},
		{"extensions", "spec.tools[].implementation.timeoutSeconds", "default", DefaultToolTimeoutSeconds},
		{"extensions", "spec.tools[].implementation.timeoutSeconds", "maximum", MaxToolTimeoutSeconds},
		{"workspaces", "spec.budget.maxContextBytes", "default", DefaultMaxContextBytes},
		{"workspaces", "spec.budget.maxContextBytes", "maximum", MaxContextBytesLimit},
		{"workspaces", "status.winners", "maxItems", MaxStatusListItems},
		{"workspaces", "status.shadowed", "maxItems", MaxStatusListItems},
		{"workspaces", "status.extensions", "maxItems", MaxStatusListItems},
		{"workspaces", "status.tools", "maxItems", MaxStatusListItems},
	} {
		t.Run(tc.crd+"/"+tc.path+"/"+tc.keyword, func(t *testing.T) {
			schema := crdSchema(t, tc.crd)
			node, err := schemaAt(schema, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := node[tc.keyword].(float64)
			if !ok {
				t.Fatalf("%s has no %s", tc.path, tc.keyword)
			}
			if int64(got) != tc.want {
				t.Errorf("the CRD says %s %s = %d, api/v1alpha1 declares %d: change the marker or the constant", tc.path, tc.keyword, int64(got), tc.want)
			}
		})
	}
}

// crdSchema returns the openAPIV3Schema of config/crd/bases/loadout.dev_<plural>.yaml.
func crdSchema(t *testing.T, plural string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "loadout.dev_"+plural+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1alpha1" {
			return v.Schema.OpenAPIV3Schema
		}
	}
	t.Fatalf("%s: no version %s", plural, "v1alpha1")
	return nil
}

// schemaAt walks a dotted path of properties; "[]" steps into array items.
func schemaAt(schema map[string]any, path string) (map[string]any, error) {
	node := schema
	for _, part := range strings.Split(path, ".") {
		name, items := strings.CutSuffix(part, "[]")
		props, _ := node["properties"].(map[string]any)
		next, ok := props[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no property %q in %s", name, path)
		}
		node = next
		if items {
			if node, ok = node["items"].(map[string]any); !ok {
				return nil, fmt.Errorf("%s has no items", name)
			}
		}
	}
	return node, nil
}
