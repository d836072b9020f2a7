// Package contentpolicy is the platform's rules over what agents read:
// CEL expressions over each published Skill (frontmatter, body,
// files, the links they hold) and each tool's description, declared or
// discovered. It is pure: the workspace pipeline hands it the content it
// resolved (the published skills.json and registry) and gets back the
// first refusal, naming the rule. Each evaluation's cost is bounded before
// it runs, as hooks' CEL is (internal/celcost).
package contentpolicy
