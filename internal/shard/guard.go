package shard

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Guard wraps c so that every write first passes MayWrite for the object's
// namespace: the namespace is this shard's and this process holds the
// shard's Lease now. Reads pass through.
func (o *Ownership) Guard(c client.Client) client.Client {
	if o == nil {
		return c
	}
	return &guarded{Client: c, o: o}
}

// NewClient is a manager Options.NewClient that guards the default client.
func (o *Ownership) NewClient(cfg *rest.Config, opts client.Options) (client.Client, error) {
	c, err := client.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return o.Guard(c), nil
}

type guarded struct {
	client.Client
	o *Ownership
}

func (g *guarded) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := g.o.MayWrite(obj.GetNamespace()); err != nil {
		return err
	}
	return g.Client.Create(ctx, obj, opts...)
}

func (g *guarded) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := g.o.MayWrite(obj.GetNamespace()); err != nil {
		return err
	}
	return g.Client.Update(ctx, obj, opts...)
}

func (g *guarded) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := g.o.MayWrite(obj.GetNamespace()); err != nil {
		return err
	}
	return g.Client.Patch(ctx, obj, patch, opts...)
}

func (g *guarded) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := g.o.MayWrite(obj.GetNamespace()); err != nil {
		return err
	}
	return g.Client.Delete(ctx, obj, opts...)
}

func (g *guarded) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	lo := &client.DeleteAllOfOptions{}
	lo.ApplyOptions(opts)
	if err := g.o.MayWrite(lo.Namespace); err != nil {
		return err
	}
	return g.Client.DeleteAllOf(ctx, obj, opts...)
}

func (g *guarded) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if err := g.o.MayWrite(applyNamespace(obj)); err != nil {
		return err
	}
	return g.Client.Apply(ctx, obj, opts...)
}

func (g *guarded) Status() client.SubResourceWriter { return g.SubResource("status") }

func (g *guarded) SubResource(name string) client.SubResourceClient {
	return &guardedSub{SubResourceClient: g.Client.SubResource(name), o: g.o}
}

type guardedSub struct {
	client.SubResourceClient
	o *Ownership
}

func (g *guardedSub) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if err := g.o.MayWrite(obj.GetNamespace()); err != nil {
		return err
	}
	return g.SubResourceClient.Create(ctx, obj, sub, opts...)
}

func (g *guardedSub) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := g.o.MayWrite(obj.GetNamespace()); err != nil {
		return err
	}
	return g.SubResourceClient.Update(ctx, obj, opts...)
}

func (g *guardedSub) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := g.o.MayWrite(obj.GetNamespace()); err != nil {
		return err
	}
	return g.SubResourceClient.Patch(ctx, obj, patch, opts...)
}

func (g *guardedSub) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if err := g.o.MayWrite(applyNamespace(obj)); err != nil {
		return err
	}
	return g.SubResourceClient.Apply(ctx, obj, opts...)
}

// applyNamespace reads metadata.namespace of an apply configuration.
func applyNamespace(obj runtime.ApplyConfiguration) string {
	if n, ok := obj.(interface{ GetNamespace() *string }); ok {
		if ns := n.GetNamespace(); ns != nil {
			return *ns
		}
		return ""
	}
	var m struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	b, _ := json.Marshal(obj)
	_ = json.Unmarshal(b, &m)
	return m.Metadata.Namespace
}
