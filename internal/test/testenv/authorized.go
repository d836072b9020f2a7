package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitAuthorized waits, at most a minute, until the API server's authorizer
// lets user (in groups) do what attrs name, asked with a
// SubjectAccessReview through c (an admin client). A new Role or binding
// reaches the authorizer's cache a moment after it is created: a request in
// between is refused by RBAC ("clusterrole not found"), and a test would
// judge RBAC's cache instead of the policy or the manager it means to.
func WaitAuthorized(t testing.TB, c client.Client, user string, groups []string, attrs authorizationv1.ResourceAttributes) {
	t.Helper()
	Eventually(t, time.Minute, func() error {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups, ResourceAttributes: &attrs}}
		if err := c.Create(context.Background(), review); err != nil {
			return err
		}
		if !review.Status.Allowed {
			return fmt.Errorf("RBAC does not let %s %s %s.%s in %q yet: %s", user, attrs.Verb, attrs.Resource, attrs.Group, attrs.Namespace, review.Status.Reason)
		}
		return nil
	})
}
