// Package skillmd owns the SKILL.md format of Agent Skills (as Pi and the
// Agent Skills spec read it): splitting and parsing the YAML frontmatter with
// YAML 1.2 rules, reading and rewriting its description. Every other package
// that reads or writes a SKILL.md goes through it.
package skillmd

// FileName is the file that makes a directory a skill.
const FileName = "SKILL.md"
