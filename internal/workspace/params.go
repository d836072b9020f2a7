package workspace

import (
	"context"
	"fmt"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// ParamsNamespace is the namespace whose ConfigMap an extension's paramRef
// names for Workspace ws: the Workspace's (tenant-owned values) or the
// extension's own.
func ParamsNamespace(ext *v1alpha1.Extension, wsNamespace string) string {
	if ext.Spec.ParamRef != nil && ext.Spec.ParamRef.From == v1alpha1.ParamsFromExtension {
		return ext.Namespace
	}
	return wsNamespace
}

// resolveParams reads each trusted candidate's params ConfigMap for ws.
// A missing ConfigMap is what its parameterNotFoundAction says (Deny by
// default); a read that fails is transient, like every read.
func resolveParams(ctx context.Context, namespace string, objs Objects, cands []Candidate) error {
	for i := range cands {
		c := &cands[i]
		ref := c.Extension.Spec.ParamRef
		if ref == nil || !c.Trusted {
			continue
		}
		ns := ParamsNamespace(c.Extension, namespace)
		from := ns + "/" + ref.Name
		data, _, ok, err := objs.ConfigMapData(ctx, ns, ref.Name)
		if err != nil {
			return fmt.Errorf("reading the params ConfigMap %s of extension %s/%s: %w", from, c.Extension.Namespace, c.Extension.Name, err)
		}
		p := &contract.HookParams{From: from}
		switch {
		case !ok:
			p.Missing = string(vocab.ParamsDeny)
			if ref.ParameterNotFoundAction == vocab.ParamsAllow {
				p.Missing = string(vocab.ParamsAllow)
			}
		case paramsSize(data) > vocab.MaxParamsBytes:
			c.ParamsErr = fmt.Errorf("spec.paramRef: ConfigMap %s holds %d bytes of data, more than the limit of %d for params", from, paramsSize(data), vocab.MaxParamsBytes)
		default:
			p.Values = make(map[string]string, len(data))
			for k, v := range data {
				p.Values[k] = v
			}
		}
		c.Params = p
	}
	return nil
}

func paramsSize(data map[string]string) int {
	n := 0
	for k, v := range data {
		n += len(k) + len(v)
	}
	return n
}

// withParams is the candidate's source with its hooks bound to its params
// (checked as they register), or failing to import with why its params
// cannot be used.
func withParams(src exthost.Source, c Candidate) exthost.Source {
	if c.ParamsErr != nil {
		err := c.ParamsErr
		src.Import = func(context.Context, exthost.Env) (exthost.Factory, error) { return nil, err }
		return src
	}
	return exthost.WithParams(src, c.Params)
}
