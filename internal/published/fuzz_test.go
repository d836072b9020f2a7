package published

import (
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/resources"
)

// FuzzParseContext: an agent pod parses whatever its mounted ConfigMap holds
// (a hand edit, a half-written file). Parsing never panics; what it accepts
// hashes to its manifest's hash, and every published skill and template can
// be activated and rendered without panicking.
func FuzzParseContext(f *testing.F) {
	f.Add("# prompt\n", `{"hash":""}`, `{"skills":[{"name":"review","body":"b","files":[{"path":"a.md","content":"x"}]}]}`, `{"templates":[{"name":"t","body":"{{x}}"}]}`)
	f.Add("", `{}`, `{}`, `{}`)
	f.Add("x", `{"hash":"sha256:00"}`, `null`, `[]`)
	f.Add("x", `{`, `{"skills":null}`, `{"templates":[{"name":"","body":""}]}`)
	f.Fuzz(func(t *testing.T, prompt, manifest, skills, templates string) {
		data := map[string]string{"system-prompt.md": prompt, "manifest.json": manifest, "skills.json": skills, "templates.json": templates}
		pc, err := Parse(data)
		if err != nil {
			// Most inputs fail the hash check; retry with the hash the data
			// would need, to reach the code behind it.
			if pc, err = Parse(withMatchingHash(data)); err != nil {
				return
			}
			data = withMatchingHash(data)
		}
		if pc.Hash != resources.ContextHash(data) {
			t.Fatalf("accepted hash %q, data hashes to %q", pc.Hash, resources.ContextHash(data))
		}
		for name, s := range pc.skills {
			var files []string
			for _, f := range s.Files {
				files = append(files, f.Path)
			}
			if a, err := pc.Activate(name, files); err == nil && len(a.Files) > len(files) {
				t.Fatalf("activation returned more files than requested")
			}
		}
		for name, tp := range pc.templates {
			args := map[string]string{}
			for _, v := range resources.Variables(tp.Body) {
				args[v] = "v"
			}
			if _, err := pc.Render(name, args, time.UnixMilli(0)); err != nil {
				t.Fatalf("render %q with every variable: %v", name, err)
			}
		}
		_ = pc.Manifest()
	})
}

// withMatchingHash rewrites manifest.json's hash field to the data's hash,
// when manifest.json is a JSON object.
func withMatchingHash(data map[string]string) map[string]string {
	var m map[string]any
	if json.Unmarshal([]byte(data["manifest.json"]), &m) != nil || m == nil {
		return data
	}
	out := maps.Clone(data)
	m["hash"] = resources.ContextHash(data)
	b, _ := json.Marshal(m)
	out["manifest.json"] = string(b)
	// The hash covers manifest.json too; recompute over the new bytes.
	m["hash"] = resources.ContextHash(out)
	b, _ = json.Marshal(m)
	out["manifest.json"] = string(b)
	return out
}
