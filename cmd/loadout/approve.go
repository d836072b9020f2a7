package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/kubescheme"
)

// newApproveCommand and newDenyCommand decide an Approval (docs/hooks.md,
// "Approvals") through its status subresource, as the kubeconfig's user;
// admission lets only a member of the approver groups the hook names do it,
// never the requester.
func newApproveCommand() *cobra.Command {
	return newDecideCommand(v1alpha1.ApprovalApproved, "approve", "Approve a tool call a platform hook asked about (an Approval)")
}

func newDenyCommand() *cobra.Command {
	return newDecideCommand(v1alpha1.ApprovalDenied, "deny", "Deny a tool call a platform hook asked about (an Approval)")
}

func newDecideCommand(decision v1alpha1.ApprovalDecision, verb, short string) *cobra.Command {
	var namespace, reason, kubeconfig string
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long: short + `. The Approval names the exact call (tool, arguments
and their digest), the hook and its question, the requesting pod and when
it expires; the call runs only if approved before then, exactly as asked,
once. The decision is written to the Approval's status as the kubeconfig's
user, who must be in one of its approver groups and not its requester;
a decision is final. List the pending ones with 'kubectl get approvals'.
See docs/hooks.md#approvals.`,
		Example: fmt.Sprintf("  kubectl get approvals -n team-a\n  loadout %s -n team-a bash-x7k2p --reason \"change ticket CHG-1042\"", verb),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if decision == v1alpha1.ApprovalDenied && reason == "" {
				return errors.New("deny needs --reason: the agent is told why")
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
			cfg, err := loader.ClientConfig()
			if err != nil {
				return err
			}
			if namespace == "" {
				if namespace, _, err = loader.Namespace(); err != nil {
					return err
				}
			}
			c, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			return decide(cmd.Context(), cmd.OutOrStdout(), c, cs, client.ObjectKey{Namespace: namespace, Name: args[0]}, decision, reason, time.Now())
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the Approval's namespace (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&reason, "reason", "", "why; required to deny, shown to the agent")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	return cmd
}

// decide writes decision on the Approval key as the client's user.
func decide(ctx context.Context, out io.Writer, c client.Client, cs kubernetes.Interface, key client.ObjectKey,
	decision v1alpha1.ApprovalDecision, reason string, now time.Time) error {
	var a v1alpha1.Approval
	if err := c.Get(ctx, key, &a); err != nil {
		return fmt.Errorf("approval %s: %w", key, err)
	}
	if d := a.Status.Decision; d != "" && d != v1alpha1.ApprovalPending {
		return fmt.Errorf("approval %s was %s by %s already; a decision is final", key, d, a.Status.DecidedBy)
	}
	if !now.Before(a.Spec.ExpiresAt.Time) {
		return fmt.Errorf("approval %s expired at %s; the agent must ask again", key, a.Spec.ExpiresAt.UTC().Format(time.RFC3339))
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("who am I (SelfSubjectReview): %w", err)
	}
	status := v1alpha1.ApprovalStatus{Decision: decision, DecidedBy: review.Status.UserInfo.Username, Reason: reason,
		DecidedAt: &metav1.Time{Time: now.UTC().Truncate(time.Second)}}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	if err := c.Status().Patch(ctx, &a, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("approval %s: %w", key, err)
	}
	args := "{}"
	if a.Spec.Call.Arguments != nil {
		args = string(a.Spec.Call.Arguments.Raw)
	}
	_, err = fmt.Fprintf(out, "approval %s %s by %s: %s %s (%s), asked by hook %s/%s for %s\n", key, decision, status.DecidedBy,
		a.Spec.Call.Tool, args, a.Spec.Call.ArgumentsDigest, a.Spec.Hook.Extension, a.Spec.Hook.Name, a.Spec.Requester.Pod)
	return err
}
