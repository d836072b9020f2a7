package resources

import (
	"errors"
	"maps"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Repolicy must give exactly the bytes Render gives for the same content
// with the new registry: the held content is the last good content, and the
// policy is the current one, with nothing of the old policy left.
func TestRepolicy_IsRenderWithTheNewRegistry(t *testing.T) {
	guard := contract.Registry{
		Hooks:        []contract.Hook{{Extension: "platform-guard", Name: "no-rm", Event: contract.EventBeforeToolCall, Tools: []string{"shell"}, TimeoutSeconds: 10, CEL: &contract.CELHook{Expression: "true"}}},
		PromptGuides: []contract.PromptGuide{{Extension: "platform-guard", Text: "NEW-PLATFORM-GUIDE"}},
		Extensions:   []string{"platform-guard"},
		Deny:         []string{"web"},
	}
	for name, regs := range map[string][2]contract.Registry{
		"tools to tools and guides": {exampleInput().Registry, guard},
		"empty to guard":            {{}, guard},
		"guard to empty":            {guard, {}},
	} {
		t.Run(name, func(t *testing.T) {
			in := exampleInput()
			in.Registry, in.PlatformPolicy = regs[0], "sha256:old"
			old, err := Render(in)
			if err != nil {
				t.Fatal(err)
			}
			in.Registry, in.PlatformPolicy = regs[1], "sha256:new"
			want, err := Render(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Repolicy(old.Data, func(contract.Registry) contract.Registry { return regs[1] }, "sha256:new", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.Manifest.PlatformPolicy != "sha256:new" {
				t.Errorf("platformPolicy = %q, want the new policy's digest", got.Manifest.PlatformPolicy)
			}
			if !maps.Equal(got.Data, want.Data) || got.Hash != want.Hash || got.Bytes != want.Bytes {
				t.Fatalf("Repolicy differs from Render:\n got %q\nwant %q", got.Data[contract.KeySystemPrompt], want.Data[contract.KeySystemPrompt])
			}
		})
	}
}

func TestRepolicy_RefusesWhatItCannotTakeApart(t *testing.T) {
	old, err := Render(exampleInput())
	if err != nil {
		t.Fatal(err)
	}
	edited := maps.Clone(old.Data)
	edited[contract.KeySystemPrompt] += "TRAILING TEXT\n"
	for name, data := range map[string]map[string]string{
		"no manifest":            {contract.KeySystemPrompt: "x\n"},
		"prompt after the tools": edited,
		"another kind":           {contract.KeyManifest: `{"apiVersion":"v1","kind":"ConfigMap"}`},
	} {
		if _, err := Repolicy(data, func(r contract.Registry) contract.Registry { return r }, "", 0); !errors.Is(err, ErrNotRepolicyable) {
			t.Errorf("%s: err = %v, want ErrNotRepolicyable", name, err)
		}
	}
	var tooLarge *TooLargeError
	if _, err := Repolicy(old.Data, func(r contract.Registry) contract.Registry { return r }, "", 100); !errors.As(err, &tooLarge) {
		t.Errorf("over budget: err = %v, want a *TooLargeError", err)
	}
}
