// Package sandboxpolicy computes the effective sandbox of a Workspace from
// the declarations that apply to it (docs/security.md, "Sandbox"): the
// imposed platform extensions' declarations intersect, and each tenant
// declaration (the Workspace's spec.sandbox, an extension of its own
// namespace) intersects with the result, so a tenant can narrow the
// platform's sandbox and never widen it. It is pure: the controller, `loadout
// preview` and the held-context path all call it and get the same value.
package sandboxpolicy

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/egress"
)

// FromAPI converts a declaration to its normal form: paths cleaned, one
// entry per path with the union of its rights, sorted; ports sorted and
// unique. A relative path grants nothing and is dropped (the API refuses
// one; manifests `loadout preview` reads are not validated): dropping a
// grant can only narrow. UnsandboxedAgents stays as declared, "" meaning
// no opinion (Effective settles it). nil in, nil out.
func FromAPI(s *v1alpha1.Sandbox) *contract.Sandbox {
	if s == nil {
		return nil
	}
	out := &contract.Sandbox{UnsandboxedAgents: string(s.UnsandboxedAgents), AgentsUnderLoadoutSandbox: s.AgentsUnderLoadoutSandbox}
	if s.Filesystem != nil {
		var paths []contract.SandboxPath
		for _, p := range s.Filesystem.Paths {
			if !strings.HasPrefix(p.Path, "/") {
				continue
			}
			acc := make([]string, 0, len(p.Access))
			for _, a := range p.Access {
				acc = append(acc, string(a))
			}
			paths = append(paths, contract.SandboxPath{Path: path.Clean(p.Path), Access: acc})
		}
		out.Filesystem = &contract.SandboxFilesystem{Paths: normalPaths(paths)}
	}
	if s.Network != nil {
		ports := make([]int, 0, len(s.Network.ConnectPorts))
		for _, p := range s.Network.ConnectPorts {
			if p >= 1 && p <= 65535 {
				ports = append(ports, int(p))
			}
		}
		out.Network = &contract.SandboxNetwork{ConnectPorts: slices.Compact(slices.Sorted(slices.Values(ports))), Hosts: normalHosts(s.Network.Hosts)}
	}
	return out
}

// normalHosts is egress.Normal, nil for none (so a declaration without
// hosts publishes none).
func normalHosts(in []string) []string {
	if out := egress.Normal(in); len(out) > 0 {
		return out
	}
	return nil
}

// Effective is the sandbox of a Workspace: the intersection of the
// platform's declarations, narrowed by the tenant's. A platform declaration
// that leaves unsandboxedAgents unset means Refuse, so no tenant can turn
// it into Allow; a tenant's unset value has no opinion. nil when nothing is
// declared: the agents run unsandboxed.
func Effective(platform, tenant []*contract.Sandbox) *contract.Sandbox {
	var acc *contract.Sandbox
	for _, p := range platform {
		if p == nil {
			continue
		}
		p := clone(p)
		if p.UnsandboxedAgents == "" {
			p.UnsandboxedAgents = contract.UnsandboxedRefuse
		}
		acc = Intersect(acc, p)
	}
	wrapped := acc != nil && acc.AgentsUnderLoadoutSandbox
	for _, t := range tenant {
		if t != nil && t.AgentsUnderLoadoutSandbox {
			// How the platform starts its pods is the platform's word.
			t = clone(t)
			t.AgentsUnderLoadoutSandbox = false
		}
		acc = Intersect(acc, t)
	}
	if acc != nil {
		acc.AgentsUnderLoadoutSandbox = wrapped
	}
	if acc != nil && acc.UnsandboxedAgents != contract.UnsandboxedAllow {
		acc.UnsandboxedAgents = contract.UnsandboxedRefuse
	}
	return acc
}

// Intersect returns the sandbox that grants only what both a and b grant.
// nil stands for no declaration (everything allowed). Neither argument is
// modified.
//
// Filesystem rights are inherited down the tree (a right granted on /w
// holds in /w/src), so a path's rights in a are the union over the rules
// of a on its ancestors, and likewise in b. The intersection is therefore
// exactly: for every rule of a and rule of b on the same branch (one path
// at or below the other), the deeper path with the rights both grant.
func Intersect(a, b *contract.Sandbox) *contract.Sandbox {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return clone(b)
	case b == nil:
		return clone(a)
	}
	// Any platform declaration that says its pods wrap agents is the
	// platform's word (Effective keeps tenants out of it).
	out := &contract.Sandbox{UnsandboxedAgents: unsandboxed(a.UnsandboxedAgents, b.UnsandboxedAgents),
		AgentsUnderLoadoutSandbox: a.AgentsUnderLoadoutSandbox || b.AgentsUnderLoadoutSandbox}
	switch {
	case a.Filesystem == nil:
		out.Filesystem = cloneFS(b.Filesystem)
	case b.Filesystem == nil:
		out.Filesystem = cloneFS(a.Filesystem)
	default:
		var paths []contract.SandboxPath
		for _, pa := range a.Filesystem.Paths {
			for _, pb := range b.Filesystem.Paths {
				deeper := ""
				switch {
				case contract.Within(pa.Path, pb.Path):
					deeper = pb.Path
				case contract.Within(pb.Path, pa.Path):
					deeper = pa.Path
				default:
					continue
				}
				var both []string
				for _, r := range pa.Access {
					if slices.Contains(pb.Access, r) {
						both = append(both, r)
					}
				}
				if len(both) > 0 {
					paths = append(paths, contract.SandboxPath{Path: deeper, Access: both})
				}
			}
		}
		out.Filesystem = &contract.SandboxFilesystem{Paths: normalPaths(paths)}
	}
	switch {
	case a.Network == nil:
		out.Network = cloneNet(b.Network)
	case b.Network == nil:
		out.Network = cloneNet(a.Network)
	default:
		ports := []int{}
		for _, p := range a.Network.ConnectPorts {
			if slices.Contains(b.Network.ConnectPorts, p) {
				ports = append(ports, p)
			}
		}
		out.Network = &contract.SandboxNetwork{ConnectPorts: ports,
			Hosts: normalHosts(egress.Intersect(a.Network.Hosts, a.Network.ConnectPorts, b.Network.Hosts, b.Network.ConnectPorts))}
	}
	return out
}

// unsandboxed combines two unsandboxedAgents values: Refuse wins, an unset
// value has no opinion.
func unsandboxed(a, b string) string {
	switch {
	case a == contract.UnsandboxedRefuse || b == contract.UnsandboxedRefuse:
		return contract.UnsandboxedRefuse
	case a == "":
		return b
	default:
		return a
	}
}

// normalPaths merges entries of the same path (union of rights) and sorts
// paths and rights; never nil.
func normalPaths(in []contract.SandboxPath) []contract.SandboxPath {
	byPath := map[string][]string{}
	for _, p := range in {
		byPath[p.Path] = append(byPath[p.Path], p.Access...)
	}
	out := make([]contract.SandboxPath, 0, len(byPath))
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		out = append(out, contract.SandboxPath{Path: p, Access: slices.Compact(slices.Sorted(slices.Values(byPath[p])))})
	}
	return out
}

func clone(s *contract.Sandbox) *contract.Sandbox {
	if s == nil {
		return nil
	}
	return &contract.Sandbox{Filesystem: cloneFS(s.Filesystem), Network: cloneNet(s.Network), UnsandboxedAgents: s.UnsandboxedAgents,
		AgentsUnderLoadoutSandbox: s.AgentsUnderLoadoutSandbox}
}

func cloneFS(fs *contract.SandboxFilesystem) *contract.SandboxFilesystem {
	if fs == nil {
		return nil
	}
	out := &contract.SandboxFilesystem{Paths: make([]contract.SandboxPath, len(fs.Paths))}
	for i, p := range fs.Paths {
		out.Paths[i] = contract.SandboxPath{Path: p.Path, Access: slices.Clone(p.Access)}
	}
	return out
}

func cloneNet(n *contract.SandboxNetwork) *contract.SandboxNetwork {
	if n == nil {
		return nil
	}
	return &contract.SandboxNetwork{ConnectPorts: append([]int{}, n.ConnectPorts...), Hosts: slices.Clone(n.Hosts)}
}

// ToAPI is the effective sandbox as the Workspace's status shows it
// (status.sandbox). nil in, nil out.
func ToAPI(s *contract.Sandbox) *v1alpha1.Sandbox {
	if s == nil {
		return nil
	}
	out := &v1alpha1.Sandbox{UnsandboxedAgents: v1alpha1.UnsandboxedAgents(s.UnsandboxedAgents), AgentsUnderLoadoutSandbox: s.AgentsUnderLoadoutSandbox}
	if s.Filesystem != nil {
		out.Filesystem = &v1alpha1.SandboxFilesystem{Paths: make([]v1alpha1.SandboxPath, 0, len(s.Filesystem.Paths))}
		for _, p := range s.Filesystem.Paths {
			sp := v1alpha1.SandboxPath{Path: p.Path}
			for _, a := range p.Access {
				sp.Access = append(sp.Access, v1alpha1.SandboxAccess(a))
			}
			out.Filesystem.Paths = append(out.Filesystem.Paths, sp)
		}
	}
	if s.Network != nil {
		out.Network = &v1alpha1.SandboxNetwork{ConnectPorts: make([]int32, 0, len(s.Network.ConnectPorts)), Hosts: slices.Clone(s.Network.Hosts)}
		for _, p := range s.Network.ConnectPorts {
			out.Network.ConnectPorts = append(out.Network.ConnectPorts, int32(p))
		}
	}
	return out
}
