package workspace

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"reflect"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// pemKey is a new ECDSA P-256 public key in PEM, as a platform declares one.
func pemKey(t *testing.T) v1alpha1.PEMPublicKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(k.Public())
	return v1alpha1.PEMPublicKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func signers(keys ...v1alpha1.PEMPublicKey) *v1alpha1.SkillSigners {
	return &v1alpha1.SkillSigners{PublicKeys: keys}
}

// signerObjects: the platform's release-signers extension requires
// release; the tenant's team-tools extension declares tenant (nil: none).
func signerObjects(release v1alpha1.PEMPublicKey, tenant *v1alpha1.SkillSigners) *fakeObjects {
	platform := guard("loadout-system", "release-signers")
	if release != "" {
		platform.Spec.SkillSigners = signers(release)
	}
	own := ext("team", "team-tools")
	own.Spec.SkillSigners = tenant
	return &fakeObjects{
		extensions: []v1alpha1.Extension{platform, own},
		labels: map[string]map[string]string{
			"loadout-system": {vocab.TrustLabel: "trusted"},
			"team":           {vocab.TrustLabel: "trusted"},
		},
	}
}

func declarers(reqs []contract.SignerRequirement) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.DeclaredBy+"="+r.Authority+":"+strings.Join(r.KeyIDs, ","))
	}
	return out
}

// The platform's signer requirement reaches the published manifest (so
// the context hash and the manager's signature cover it) and the platform
// policy digest; a tenant's declarations add requirements after it, in
// the full pass and in a held context alike, and none drops it: a
// Workspace that repeats the platform's key adds nothing, and one that
// names only its own key is one more requirement, not a replacement.
func TestResolve_PlatformSkillSignersPublishedAndTenantOnlyAdds(t *testing.T) {
	release, team := pemKey(t), pemKey(t)
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{SkillSigners: signers(release)})
	objs := signerObjects(release, signers(team))
	res, err := resolve(context.Background(), ws, objs, HostLoader{})
	if err != nil || res.Failure != nil {
		t.Fatalf("Resolve: %v %v", err, res.Failure)
	}
	got := res.Result.Manifest.Registry.SkillSigners
	if len(got) != 2 || got[0].DeclaredBy != "loadout-system/release-signers" || got[0].Authority != contract.AuthorityPlatform ||
		got[1].DeclaredBy != "team/team-tools" || got[1].Authority != contract.AuthorityProject || len(got[0].PublicKeys) != 1 {
		t.Fatalf("published requirements %v, want the platform's then the tenant extension's", declarers(got))
	}

	imp, err := PlatformPolicyOf(context.Background(), ws.Namespace, objs, policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if imp.Digest() != res.Result.Manifest.PlatformPolicy {
		t.Error("the platform policy digest moved with the tenant's declarations: it must name the platform's alone")
	}
	bare, err := PlatformPolicyOf(context.Background(), ws.Namespace, signerObjects("", nil), policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := PlatformPolicyOf(context.Background(), ws.Namespace, signerObjects(pemKey(t), nil), policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if bare.Digest() == imp.Digest() || other.Digest() == imp.Digest() {
		t.Error("the platform policy digest ignores the platform's trusted signers: a changed key would not move the epoch")
	}

	tenant, err := TenantPolicy(context.Background(), ws, objs, policy)
	if err != nil {
		t.Fatal(err)
	}
	if held := HeldRegistry(contract.Registry{}, imp, tenant).SkillSigners; !reflect.DeepEqual(held, got) {
		t.Errorf("held context: %v, want %v", declarers(held), declarers(got))
	}

	// The tenant names only its own key: both must be met.
	own := workspaceIn("team", v1alpha1.WorkspaceSpec{SkillSigners: signers(team)})
	plan := mustGather(t, own, signerObjects(release, nil))
	if d := declarers(plan.SkillSigners); len(d) != 2 || !strings.HasPrefix(d[0], "loadout-system/release-signers=platform") || !strings.HasPrefix(d[1], "Workspace team/dev=project") {
		t.Errorf("a Workspace naming its own key: %v, want the platform's kept beside it", d)
	}
}

// A key that does not parse: the tenant's fails the Workspace's resolution
// with InvalidSkillSigners (its input is invalid), and in a held context is
// kept as a requirement no artifact meets; the platform's breaks the
// platform's policy, never silently dropped.
func TestSkillSigners_BadKeysFailClosed(t *testing.T) {
	release := pemKey(t)
	garbage := v1alpha1.PEMPublicKey("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{SkillSigners: signers(garbage)})
	res, err := resolve(context.Background(), ws, signerObjects(release, nil), HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || res.Failure.Reason != vocab.ReasonInvalidSkillSigners || !strings.Contains(res.Failure.Err.Error(), "Workspace team/dev") {
		t.Fatalf("failure %+v, want InvalidSkillSigners naming the Workspace", res.Failure)
	}
	tenant, err := TenantPolicy(context.Background(), ws, signerObjects(release, nil), policy)
	if err != nil {
		t.Fatal(err)
	}
	imp, _ := PlatformPolicyOf(context.Background(), ws.Namespace, signerObjects(release, nil), policy, HostLoader{})
	held := HeldRegistry(contract.Registry{}, imp, tenant).SkillSigners
	if len(held) != 2 || held[1].DeclaredBy != "Workspace team/dev" || len(held[1].PublicKeys) != 0 {
		t.Errorf("held: %v, want the platform's and an unmeetable tenant requirement", declarers(held))
	}

	broken, err := PlatformPolicyOf(context.Background(), "team", signerObjects(garbage, nil), policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(broken.Broken, "skillSigners of loadout-system/release-signers") {
		t.Errorf("platform policy with a bad key: Broken = %q", broken.Broken)
	}
}
