// Package charts tests the Helm charts under charts/ with the helm CLI built
// from Go modules (`make helm`): they lint, they render exactly the objects of
// the kustomize bases they are generated from (config/default and
// config/namespaced), `helm install` of both works on a real API server, the
// namespace-scoped install runs the manager as its ServiceAccount with Roles
// only, and the samples apply with `kubectl apply -k config/samples`.
package charts
