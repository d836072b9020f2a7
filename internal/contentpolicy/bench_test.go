package contentpolicy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
)

// BenchmarkSampleRules_EverydaySkill: the six sample rules over one public
// SKILL.md (testdata/public-skills, 1–6 KiB).
func BenchmarkSampleRules_EverydaySkill(b *testing.B) {
	rules := sampleRules(b)
	docs := readTree(b, filepath.Join("testdata", "public-skills"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := rules.Skill(docs[i%len(docs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSampleRules_AnthropicsShapedTree: the sample rules over all 17
// skills shaped like anthropics/skills (12 MB, text and binary files).
func BenchmarkSampleRules_AnthropicsShapedTree(b *testing.B) {
	rules := sampleRules(b)
	dir := b.TempDir()
	packtest.WriteAll(b, dir)
	docs := readTree(b, dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, d := range docs {
			if err := rules.Skill(d); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSampleRules_MaximalSkill: a skill of 900 KiB of text (a whole
// context's budget) with 2,000 links to allowed hosts: the worst case the
// sample rules meet, under the cost limit.
func BenchmarkSampleRules_MaximalSkill(b *testing.B) {
	rules := sampleRules(b)
	line := "See https://github.com/org/repo/blob/main/docs/guide.md for the details of this step.\n"
	body := strings.Repeat(line, 900<<10/len(line))
	doc := &contract.SkillDoc{Name: "big", Description: "A big skill.", Body: body}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := rules.Skill(doc); err != nil {
			b.Fatal(err)
		}
	}
}
