package exthost

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// Reasons of an Outcome that is not Loaded.
const (
	// ReasonUntrusted: the extension's namespace is not trusted for extensions;
	// nothing of it was imported or contacted.
	ReasonUntrusted = "Untrusted"
	// ReasonImportFailed: the extension's code or manifest could not be obtained.
	ReasonImportFailed = "ImportFailed"
	// ReasonInvalid: the extension's definition is invalid (a CEL expression
	// does not compile, an input schema is not an object schema, …).
	ReasonInvalid = "Invalid"
	// ReasonFactoryFailed: the extension's factory returned an error or panicked.
	ReasonFactoryFailed = "FactoryFailed"
	// ReasonAlreadyLoaded: an extension with the same id is already committed.
	ReasonAlreadyLoaded = "AlreadyLoaded"
	// ReasonDuplicateTool: the extension registered one tool name twice.
	ReasonDuplicateTool = "DuplicateTool"
	// ReasonToolCollision: a tool name is already taken, by a built-in tool or
	// by an extension loaded earlier.
	ReasonToolCollision = "ToolCollision"
)

// Factory registers an extension's tools and hooks through API. It runs once,
// after trust and import; an error rejects the whole extension.
type Factory func(api API) error

// Env is what an import may use: the host's outbound client and Workspace.
type Env struct {
	Outbound  outbound.Doer
	Workspace WorkspaceInfo
}

// ImportFunc obtains an extension's factory: reads its definition, fetches its
// manifest, loads its code. It runs only for a trusted extension.
type ImportFunc func(ctx context.Context, env Env) (Factory, error)

// Source is an extension before trust is decided: an id and a namespace, known
// without contacting anything, and how to import it.
type Source struct {
	ID        string
	Namespace string
	Import    ImportFunc
	// Imposed marks a platform extension imposed on the Workspace: its
	// hooks run after every hook that is not, on every event, so the
	// platform judges what the tenant's hooks made of a call or prompt
	// (docs/hooks.md, "Order").
	Imposed bool
}

// Outcome is what became of one extension (the Workspace's status.extensions).
type Outcome struct {
	Extension string
	Namespace string
	State     vocab.ExtensionLoadState
	Reason    string
	Message   string
	Tools     []string
}

// InvalidError reports an extension definition that cannot load. Factories
// return it so the outcome says Invalid rather than FactoryFailed.
type InvalidError struct{ Errs []error }

func (e *InvalidError) Error() string { return errors.Join(e.Errs...).Error() }

// Load runs trust → import → factory → commit (rule R-EXT-1). Untrusted, the
// import is never called. Any failure leaves the registry exactly as it was.
func (h *Host) Load(ctx context.Context, src Source, trusted bool) Outcome {
	return h.Commit(h.Prepare(ctx, src, trusted))
}

// Prepared is an extension after trust, import and factory, before commit:
// a sealed stage, or the outcome that kept it from getting one (skipped,
// rejected). It is immutable, so one Prepared may be committed into many
// hosts: the controller prepares a namespace's imposed extensions once, for
// the platform's policy, and commits them into every Workspace's host in
// that Workspace's load order, importing nothing twice. What a commit
// decides (an id already loaded, a tool name taken by a built-in or an
// earlier extension) depends on the host, so it is decided again each
// time; what import and factory produce does not, as long as they read
// nothing of the host's Workspace (Env.Workspace, API.Workspace), which
// extension objects never do (package extobject).
type Prepared struct {
	out   Outcome
	stage *stage // nil when out is final
}

// Prepare runs trust → import → factory for src, with this host's outbound
// client and Workspace; Commit finishes the load.
func (h *Host) Prepare(ctx context.Context, src Source, trusted bool) Prepared {
	out := Outcome{Extension: src.ID, Namespace: src.Namespace}
	reject := func(reason string, err error) Prepared {
		out.State, out.Reason, out.Message = vocab.ExtensionRejected, reason, err.Error()
		return Prepared{out: out}
	}
	if !trusted {
		out.State, out.Reason = vocab.ExtensionSkippedUntrusted, ReasonUntrusted
		out.Message = fmt.Sprintf("namespace %q is not trusted for extensions; nothing was loaded or contacted", src.Namespace)
		return Prepared{out: out}
	}
	if src.ID == "" {
		return reject(ReasonInvalid, errors.New("extension id is empty"))
	}
	if src.Import == nil {
		return reject(ReasonImportFailed, errors.New("extension has no import"))
	}
	factory, err := safeImport(ctx, src.Import, Env{Outbound: h.client, Workspace: h.workspace})
	if err != nil {
		return reject(classify(err, ReasonImportFailed), err)
	}
	api := &stagingAPI{stage: &stage{id: src.ID, namespace: src.Namespace, imposed: src.Imposed}, workspace: h.workspace}
	err = safeFactory(factory, api)
	st := api.seal()
	if err != nil {
		return reject(classify(err, ReasonFactoryFailed), err)
	}
	return Prepared{out: out, stage: st}
}

// Commit makes a prepared extension visible in this host, or reports why
// not. A Prepared that carries its outcome already commits nothing.
func (h *Host) Commit(p Prepared) Outcome {
	out := p.out
	if p.stage == nil {
		return out
	}
	if err := h.commit(p.stage); err != nil {
		var ce *commitError
		errors.As(err, &ce)
		out.State, out.Reason, out.Message = vocab.ExtensionRejected, ce.reason, err.Error()
		return out
	}
	out.State = vocab.ExtensionLoaded
	for _, t := range p.stage.tools {
		out.Tools = append(out.Tools, t.Name)
	}
	out.Message = fmt.Sprintf("%d tools, %d hooks", len(p.stage.tools), len(p.stage.hooks))
	return out
}

// commit makes a checked stage visible in one atomic swap.
func (h *Host) commit(s *stage) error {
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	cur := h.reg.Load()
	if err := s.check(cur); err != nil {
		return err
	}
	h.reg.Store(cur.with(s))
	return nil
}

// Extensions lists the committed extension ids in commit order.
func (h *Host) Extensions() []string { return slices.Clone(h.reg.Load().extensions) }

func classify(err error, fallback string) string {
	var inv *InvalidError
	if errors.As(err, &inv) {
		return ReasonInvalid
	}
	return fallback
}

// safeImport and safeFactory turn an author's panic into a rejection: loading
// one bad extension must not take the controller or hostd down.
func safeImport(ctx context.Context, imp ImportFunc, env Env) (f Factory, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("import panicked: %v", r)
		}
	}()
	f, err = imp(ctx, env)
	if err == nil && f == nil {
		err = errors.New("import returned no factory")
	}
	return f, err
}

func safeFactory(f Factory, api API) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("factory panicked: %v", r)
		}
	}()
	return f(api)
}
