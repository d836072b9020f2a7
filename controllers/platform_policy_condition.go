package controllers

import (
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// setPlatformPolicyCondition says whether the platform's policy reaches the
// Workspace: PlatformPolicy False names every platform namespace that is
// missing or lacks a valid trust label, so a Workspace is never silently
// without the platform's hooks, denied tools and prompt guides. Without a
// plan (the reads failed) the condition stays as the last pass left it.
func setPlatformPolicyCondition(ws *v1alpha1.Workspace, plan *workspace.Plan) {
	if plan == nil {
		return
	}
	if len(plan.UnlabelledPlatform) == 0 {
		setCondition(ws, vocab.ConditionPlatformPolicy, true, vocab.ReasonPlatformNamespacesTrusted,
			"every platform namespace carries a valid "+vocab.TrustLabel+" label; its imposed policy applies")
		return
	}
	setCondition(ws, vocab.ConditionPlatformPolicy, false, vocab.ReasonPlatformNamespaceUnlabelled, unlabelledPlatformMessage(plan.UnlabelledPlatform))
}

func unlabelledPlatformMessage(namespaces []string) string {
	noun := "namespace " + namespaces[0] + " does"
	if len(namespaces) > 1 {
		noun = "namespaces " + strings.Join(namespaces, ", ") + " do"
	}
	return fmt.Sprintf("platform %s not exist or carry no valid %s label: none of its platform policy (hooks, denied tools, prompt guides) applies to this Workspace; a trust admin must label it: kubectl label namespace %s %s=%s",
		noun, vocab.TrustLabel, namespaces[0], vocab.TrustLabel, vocab.TrustTrusted)
}
