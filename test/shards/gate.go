package shards

import "sigs.k8s.io/controller-runtime/pkg/envtest"

// GateOn turns on the API server's sharded list and watch (KEP-5866).
func GateOn(env *envtest.Environment) {
	env.ControlPlane.GetAPIServer().Configure().Append("feature-gates", "ShardedListAndWatch=true")
}
