package resources

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// docxBody and its files are the content an external "docx" skill fetches.

func TestValidateSkill_SourceRulesMirrorTheCRD(t *testing.T) {
	commit := strings.Repeat("a", 40)
	cases := map[string]Skill{
		"tag":            {Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/a/b:v1"}}},
		"tag and digest": {Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/a/b:v1@" + testDigest}}},
		"both":           {Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/acme/x@" + testDigest}, Git: &contract.GitSource{URL: "https://x/y", Commit: commit}}},
		"neither":        {Source: &contract.SkillSource{}},
		"branch":         {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "https://x/y", Commit: "main"}}},
		"http":           {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "http://x/y", Commit: commit}}},
		"file":           {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "file:///etc", Commit: commit}}},
		"escaping path":  {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "https://x/y", Commit: commit, Path: "../x"}}},
		"with body":      {Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/acme/x@" + testDigest}}, Body: "x"},
	}
	for name, s := range cases {
		s.Name, s.Description = "a", "d"
		if err := validateSkill(s, true); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := Skill{Name: "a", Description: "d", Source: &contract.SkillSource{Git: &contract.GitSource{URL: "https://x/y", Commit: commit, Path: "skills/pdf"}}}
	if err := validateSkill(ok, true); err != nil {
		t.Errorf("valid git source refused: %v", err)
	}
}
