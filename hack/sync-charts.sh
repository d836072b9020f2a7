#!/usr/bin/env bash
# Copies what the charts take from config/ verbatim (run by `make manifests`,
# checked by `make verify-gen`): the CRDs, the manager's generated ClusterRole
# (whole, and split for the namespace-scoped install) and the admission policies. The charts' templates read these files, so
# a new CRD field, RBAC marker or policy reaches Helm users without editing a
# template; test/charts compares the rendered charts with kustomize's output.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The namespace-scoped split of the generated ClusterRole (config/namespaced).
go run ./hack/rolesplit config/rbac/role.yaml config/namespaced

crds=charts/loadout-crds/files/crds
rm -rf "$crds" && mkdir -p "$crds"
cp config/crd/bases/*.yaml "$crds/"

files=charts/loadout/files
rm -rf "$files" && mkdir -p "$files/policy"
cp config/rbac/role.yaml "$files/role.yaml"
cp config/rbac/approvals_roles.yaml "$files/approvals_roles.yaml"
cp config/namespaced/manager-role/role.yaml "$files/role_namespaced.yaml"
cp config/namespaced/namespaces_role.yaml "$files/role_namespaces.yaml"
for f in config/policy/*.yaml; do
	[ "$(basename "$f")" = kustomization.yaml ] || cp "$f" "$files/policy/"
done
