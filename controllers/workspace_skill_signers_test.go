package controllers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// The platform declares who must sign the namespace's OCI skills: the
// published manifest carries it (so the manager's signature covers it and
// the platform policy digest names it), the Workspace's status lists it,
// and its SkillSignatures condition names the git skill every agent pod
// will refuse, without holding the context back (Ready stays True).
func TestWorkspace_StatusSaysWhoMustSignSkills(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(key.Public())
	pub := v1alpha1.PEMPublicKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	plat := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: platformOtherNS, Name: "signers-" + ns},
		Spec: v1alpha1.ExtensionSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			SkillSigners:      &v1alpha1.SkillSigners{PublicKeys: []v1alpha1.PEMPublicKey{pub}},
		}}
	kit.Create(t, plat)
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), plat) })
	kit.Create(t, &v1alpha1.Skill{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lint"}, Spec: v1alpha1.SkillSpec{
		Description: "Lints.", Source: &v1alpha1.SkillSource{Git: &v1alpha1.GitSkillSource{URL: "https://example.com/skills.git", Commit: strings.Repeat("a", 40)}}}})
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	declaredBy := platformOtherNS + "/signers-" + ns
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		if len(ws.Status.SkillSigners) != 1 || ws.Status.SkillSigners[0].DeclaredBy != declaredBy ||
			ws.Status.SkillSigners[0].Authority != contract.AuthorityPlatform || len(ws.Status.SkillSigners[0].KeyIDs) != 1 {
			return fmt.Errorf("status.skillSigners %+v", ws.Status.SkillSigners)
		}
		c := meta.FindStatusCondition(ws.Status.Conditions, string(vocab.ConditionSkillSignatures))
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(vocab.ReasonUnsignableSkill) ||
			!strings.Contains(c.Message, "lint") || !strings.Contains(c.Message, declaredBy) {
			return fmt.Errorf("SkillSignatures %+v", c)
		}
		return testenv.Ready(ws)
	})
	_, cm := kit.Published(t, ns, "dev")
	testenv.MustContain(t, contract.KeyManifest, cm.Data[contract.KeyManifest], `"skillSigners":`, `"declaredBy": "`+declaredBy+`"`, "BEGIN PUBLIC KEY")
}
