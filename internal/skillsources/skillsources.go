// Package skillsources keeps the external skills (a Skill's spec.source) of
// the context hostd serves: it fetches each pinned source in the background
// (internal/sources), tries a failed one again, serves a skill's previous
// version while its new one is fetched, refuses content that disagrees with
// its Skill, and says which skills are not served at their pinned version and
// why. hostd knows it only through its SkillSources interface; `loadout
// hostd` (internal/agentcmd) wires a Keeper in, so hostd's policy path never
// links the fetchers.
package skillsources

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// DefaultTimeout bounds one fetch of an external skill source.
const DefaultTimeout = 60 * time.Second

// DefaultRetry is how long after a failed fetch a source is tried again.
const DefaultRetry = 10 * time.Second

// reasonDisagrees is the reason of a source whose content was fetched and
// verified but does not agree with its Skill (name, description, requested
// files); the log has the details.
const reasonDisagrees = "content does not agree with its Skill (name, description or requested files)"

// Options configure a Keeper. Lock and Arrived come from its owner (hostd
// hands them over: hostd.SourceHooks).
type Options struct {
	// Fetcher fetches and verifies the sourcecache. Required: `loadout hostd`
	// hands over one that fetches in process (internal/sources), the
	// sidecar one that runs its fetch helper (internal/fetchhelper).
	Fetcher *sourcecache.Fetcher
	// Timeout bounds one fetch; zero means DefaultTimeout.
	Timeout time.Duration
	// Retry is how long after a failed fetch a source is tried again; zero
	// means DefaultRetry.
	Retry time.Duration
	// Lock is the owner's lock: every Keeper method is called with it held
	// (the owner's reload serialises on it), and a fetch that ends takes it
	// to record its result and call Arrived. Required.
	Lock sync.Locker
	// Logger receives fetches, failures and refusals; nil means
	// slog.Default().
	Logger *slog.Logger
	// Failed is called for each failed fetch and each fetched content
	// refused for disagreeing with its Skill; may be nil.
	Failed func()
	// Arrived is called, with Lock held, when a fetch ends: serveAgain when
	// its content arrived for a source the served context still uses (the
	// owner calls Serve again to serve it), else only the status changed.
	// Required.
	Arrived func(ctx context.Context, serveAgain bool)
}

// Keeper holds what was fetched for the served context's external skills.
// All its state is guarded by Options.Lock.
type Keeper struct {
	opts    Options
	fetches sync.WaitGroup
	// states is what is known of each source the served context pins, by
	// served.key.
	states map[string]*state
	// served is what the last Serve returned.
	served served
}

// state is what the Keeper knows of one pinned source under one set of
// signer requirements (served.key: contract.SkillSource.String(), which
// names the digest or commit, and the requirements' digest).
type state struct {
	tree     skillpack.Tree // verified content, its files in the cache on disk; nil until fetched
	fetching bool
	// failure is the last failure, whole, for the log; reason is its short
	// form (sourcecache.Reason), the only form a status shows.
	failure error
	reason  string
	lastTry time.Time
}

// served is one context as Serve completed it.
type served struct {
	// pc is the context as loaded, without external content.
	pc *published.Context
	// signers names the context's signer requirements
	// (contract.SignerRequirementsDigest): a tree is verified under one set
	// and served only under the same set (key, Serve).
	signers string
	// trees are the external skills' trees being served, by skill name. A
	// skill whose pinned source has not arrived keeps the tree it had in the
	// context served before (stale names those), or has none.
	trees map[string]skillpack.Tree
	stale map[string]bool
}

// New returns a Keeper that has fetched nothing yet.
func New(opts Options) *Keeper {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Failed == nil {
		opts.Failed = func() {}
	}
	return &Keeper{opts: opts, states: map[string]*state{}}
}

// Serve returns pc, its policy as is, completed with the external content
// held for it, and the content source of its skills (for the materialized
// tree and the MCP skills); it is what is served until the next Serve. Each
// external skill gets its pinned source's tree if that has arrived; else the
// tree it was served with by the previous Serve (the previous version, so a
// version bump never makes a skill vanish while the new one is fetched), if
// that still agrees with the Skill; else it is pending and absent
// (published.Context.Holds). A previous version verified under other signer
// requirements is never kept: a context that starts requiring signatures
// must not go on serving what was loaded unsigned. Nothing here touches the
// network.
func (k *Keeper) Serve(pc *published.Context) (*published.Context, materialize.ContentSource) {
	prev := k.served
	next := served{pc: pc, signers: contract.SignerRequirementsDigest(pc.Manifest().SkillSigners),
		trees: map[string]skillpack.Tree{}, stale: map[string]bool{}}
	for _, sk := range next.external() {
		if st := k.states[next.key(sk)]; st != nil && st.tree != nil {
			next.trees[sk.Name] = st.tree
		} else if t, ok := prev.trees[sk.Name]; ok && prev.signers == next.signers {
			next.trees[sk.Name], next.stale[sk.Name] = t, true
		}
	}
	full, rejected := pc.WithAvailableExternal(sourcecache.ExternalSkillsOf(next.trees))
	for _, sk := range next.external() {
		err, ok := rejected[sk.Name]
		st := k.states[next.key(sk)]
		switch {
		case !ok && st != nil && st.tree != nil && st.reason == reasonDisagrees:
			st.failure, st.reason = nil, ""
		case !ok:
		case next.stale[sk.Name]:
			// The previous version no longer fits the Skill: pending.
			delete(next.trees, sk.Name)
			delete(next.stale, sk.Name)
		default:
			// The fetched content itself disagrees: a failing source.
			delete(next.trees, sk.Name)
			if st.reason != reasonDisagrees {
				k.opts.Logger.Error("Skill source refused", "skill", sk.Name, "source", sk.Source.String(), "error", err)
				k.opts.Failed()
			}
			st.failure, st.reason = err, reasonDisagrees
		}
	}
	k.served = next
	return full, sourcecache.Content{Trees: next.trees}
}

// Fetch starts a fetch, each in its own goroutine and outside the owner's
// lock, of every source of the served context that the Keeper does not hold
// and is not already fetching; a failed one is tried again Retry after its
// last try. It forgets the sources the served context does not use, so
// memory follows the served context rather than every source ever pinned (a
// fetch under way finds its state gone and drops its result).
func (k *Keeper) Fetch(ctx context.Context) {
	now := time.Now()
	var fetcher *sourcecache.Fetcher
	used := map[string]bool{}
	for _, sk := range k.served.external() {
		key := k.served.key(sk)
		used[key] = true
		st := k.states[key]
		if st == nil {
			st = &state{}
			k.states[key] = st
		}
		if st.tree != nil || st.fetching || (st.failure != nil && now.Sub(st.lastTry) < k.opts.Retry) {
			continue
		}
		if fetcher == nil {
			// The context's signer requirements, on top of the process's
			// own (--skill-signers): requirements that do not parse make
			// a fetcher that refuses every source, saying why.
			fetcher = k.opts.Fetcher.Requiring(k.served.pc.Manifest().SkillSigners)
		}
		st.fetching, st.lastTry = true, now
		k.fetches.Add(1)
		go k.fetch(ctx, fetcher, sk.Name, key, *sk.Source, st)
	}
	for key := range k.states {
		if !used[key] {
			delete(k.states, key)
		}
	}
}

// fetch fetches one source within Timeout and records the result under the
// owner's lock; Arrived then serves the current context again with it: the
// policy stays as it is, the skill's content moves to its pinned version.
func (k *Keeper) fetch(ctx context.Context, fetcher *sourcecache.Fetcher, skill, key string, src contract.SkillSource, st *state) {
	defer k.fetches.Done()
	fctx, cancel := context.WithTimeout(ctx, k.opts.Timeout)
	tree, err := fetcher.Fetch(fctx, src)
	cancel()

	k.opts.Lock.Lock()
	defer k.opts.Lock.Unlock()
	if k.states[key] != st {
		return // no context needs it any more
	}
	st.fetching = false
	if err != nil {
		st.failure, st.reason = err, sourcecache.Reason(err)
		k.opts.Failed()
		k.opts.Logger.Error("Skill source failed; retrying later", "skill", skill, "source", key, "retryIn", k.opts.Retry, "error", err)
	} else {
		st.tree, st.failure, st.reason = tree, nil, ""
		k.opts.Logger.Info("Skill source fetched", "skill", skill, "source", key)
	}
	k.opts.Arrived(ctx, err == nil && ctx.Err() == nil && k.served.uses(key))
}

// Unserved calls each for every external skill of the served context that
// is not served at its pinned version: its source, whether it is failing
// (else still fetching) and the short reason (a fixed phrase, never remote
// content), and whether its previous version serves meanwhile.
func (k *Keeper) Unserved(each func(skill, source string, failing bool, reason string, previous bool)) {
	for _, sk := range k.served.external() {
		st := k.states[k.served.key(sk)]
		if st != nil && st.tree != nil && st.failure == nil {
			continue
		}
		failing := st != nil && st.failure != nil
		reason := ""
		if failing {
			reason = st.reason
		}
		each(sk.Name, sk.Source.String(), failing, reason, k.served.stale[sk.Name])
	}
}

// Wait waits for the fetches under way, each bounded by Timeout. The caller
// must not hold Options.Lock: a fetch takes it to finish.
func (k *Keeper) Wait() { k.fetches.Wait() }

// key names what the Keeper holds of a skill's source under the signer
// requirements of s: the same artifact verified under other requirements is
// another entry, fetched (or refused) anew.
func (s served) key(sk contract.SkillDoc) string {
	if s.signers == "" {
		return sk.Source.String()
	}
	return sk.Source.String() + " signers=" + s.signers
}

// external lists the skills of s whose content comes from a source; none
// before the first Serve.
func (s served) external() []contract.SkillDoc {
	if s.pc == nil {
		return nil
	}
	var out []contract.SkillDoc
	for _, sk := range s.pc.Skills() {
		if sk.Source != nil {
			out = append(out, sk)
		}
	}
	return out
}

// uses reports whether s has a skill pinned to the source key.
func (s served) uses(key string) bool {
	for _, sk := range s.external() {
		if s.key(sk) == key {
			return true
		}
	}
	return false
}
