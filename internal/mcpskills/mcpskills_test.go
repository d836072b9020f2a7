package mcpskills

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/materialize"
)

// A skill over the extension's limits (512 files, 16 MiB) is not served,
// with a reason, rather than served to hosts that may refuse it.
func TestMCPSkills_SkillOverTheExtensionsLimitsIsNotServed(t *testing.T) {
	files := []materialize.File{{Path: materialize.SkillFile, Content: []byte("---\nname: big\ndescription: Big.\n---\n")}}
	for i := range maxSkillFiles {
		files = append(files, materialize.File{Path: "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + string(rune('a'+i/26)), Content: []byte("x")})
	}
	if _, err := newMCPSkill("big", materialize.SkillDir{Files: files}); err == nil || !strings.Contains(err.Error(), "513 files") {
		t.Fatalf("513 files: %v", err)
	}
	huge := []materialize.File{files[0], {Path: "blob.bin", Content: make([]byte, maxSkillBytes)}}
	if _, err := newMCPSkill("big", materialize.SkillDir{Files: huge}); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("over 16 MiB: %v", err)
	}
	if _, err := newMCPSkill("big", materialize.SkillDir{Files: files[:1]}); err != nil {
		t.Fatal(err)
	}
}
