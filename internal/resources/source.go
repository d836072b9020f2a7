package resources

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// The same rules as the Skill CRD's CEL (api/v1alpha1/skill_source_types.go),
// for skills that reach BuildCatalog without admission (preview -f manifests).
var (
	ociReferencePattern = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+@sha256:[0-9a-f]{64}$`)
	gitCommitPattern    = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// checkSource reports the field and the problem of an invalid source, or "".
func checkSource(s *contract.SkillSource) (field, msg string) {
	switch {
	case (s.OCI == nil) == (s.Git == nil):
		return "source", "exactly one of oci or git must be set"
	case s.OCI != nil && !ociReferencePattern.MatchString(s.OCI.Reference):
		return "source.oci.reference", "must be REGISTRY[:PORT]/REPOSITORY@sha256:<64 lowercase hex>, pinned by digest without a tag"
	case s.Git != nil && !strings.HasPrefix(s.Git.URL, "https://") && !strings.HasPrefix(s.Git.URL, "ssh://"):
		return "source.git.url", "must start with https:// or ssh://"
	case s.Git != nil && !gitCommitPattern.MatchString(s.Git.Commit):
		return "source.git.commit", "must be a full 40-character lowercase hex commit id"
	case s.Git != nil && s.Git.Path != "":
		if _, err := CleanRequest(s.Git.Path); err != nil {
			return "source.git.path", err.Error()
		}
	}
	return "", ""
}

// External skills are published without their content. An activated one is
// written into system-prompt.md as a marker line in place of its body and of
// each requested file; the agent side, after fetching the source, replaces
// each marker with the content (ResolveExternal), so the prompt it serves is
// the one the controller would have built had the skill been inline.
const markerPrefix = "<!-- loadout:source "

func BodyMarker(skill string) string {
	return markerPrefix + "body " + strconv.Quote(skill) + " -->"
}

func FileMarker(skill, file string) string {
	return markerPrefix + "file " + strconv.Quote(skill) + " " + strconv.Quote(file) + " -->"
}

// activateExternal activates a skill whose content is external: markers
// stand in for the body and the requested files, which only the agent side
// can check and read.
func activateExternal(s Skill, requests []string) (*ActivatedSkill, error) {
	out := &ActivatedSkill{Name: s.Name, Body: BodyMarker(s.Name), Origin: s.Origin.String(), Files: []ActivatedFile{}}
	for _, req := range dedupe(requests) {
		clean, err := CleanRequest(req)
		if err != nil {
			return nil, &ActivationError{Skill: s.Name, File: req, Message: "refused", Err: err}
		}
		out.Files = append(out.Files, ActivatedFile{Request: req, Source: clean, Content: FileMarker(s.Name, clean)})
	}
	return out, nil
}

// SpliceMarker replaces a marker line that follows a blank line with content
// the way BuildContext joins parts: the part loses trailing newlines.
func SpliceMarker(prompt, marker, content string) (string, bool) {
	old := "\n\n" + marker
	if !strings.Contains(prompt, old) {
		return prompt, false
	}
	return strings.Replace(prompt, old, strings.TrimRight("\n\n"+content, "\n"), 1), true
}

// ExternalSkill is the fetched content of an external skill: SKILL.md and the
// other files of its tree, modes kept.
type ExternalSkill struct {
	SkillMD []byte
	Files   []File
}

// CheckExternal parses a fetched SKILL.md and checks that it agrees with the
// Skill that pinned it: the catalog showed the Skill's name and description
// without fetching, so a source saying otherwise is refused.
func CheckExternal(name, description string, skillMD []byte) (body string, err error) {
	fm, body, err := skillmd.Parse(string(skillMD))
	if err != nil {
		return "", fmt.Errorf("%s: %w", skillmd.FileName, err)
	}
	if fm.Name != "" && string(fm.Name) != name {
		return "", fmt.Errorf("%s names skill %q, but the Skill is %q", skillmd.FileName, fm.Name, name)
	}
	if string(fm.Description) != description {
		return "", fmt.Errorf("%s description %q differs from the Skill's description %q", skillmd.FileName, truncateForError(string(fm.Description)), truncateForError(description))
	}
	return body, nil
}

func truncateForError(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
