package hostd

import (
	"context"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/sources"
)

// DefaultSourceTimeout bounds one fetch of an external skill source.
const DefaultSourceTimeout = 60 * time.Second

// reasonDisagrees is the reason of a source whose content was fetched and
// verified but does not agree with its Skill (name, description, requested
// files); the log has the details.
const reasonDisagrees = "content does not agree with its Skill (name, description or requested files)"

// sourceState is what hostd knows of one pinned source under one set of
// signer requirements (snapshot.sourceKey: contract.SkillSource.String(),
// which names the digest or commit, and the requirements' digest).
// Guarded by Server.mu.
type sourceState struct {
	tree     skillpack.Tree // verified content, its files in the cache on disk; nil until fetched
	fetching bool
	// failure is the last failure, whole, for the log; reason is its short
	// form (sources.Reason), the only form /readyz and metrics show.
	failure error
	reason  string
	lastTry time.Time
}

// SourceStatus is one external skill that is not served at its pinned
// version, as /readyz lists it.
type SourceStatus struct {
	Skill  string `json:"skill"`
	Source string `json:"source"`
	// State is "fetching" or "failing".
	State string `json:"state"`
	// Reason is why it is failing: a fixed phrase, never remote content.
	Reason string `json:"reason,omitempty"`
	// Serving is what agents get meanwhile: "previous version" or "nothing".
	Serving string `json:"serving"`
}

// withContent returns snap, its policy as is, completed with the external
// content hostd holds. Each external skill gets its pinned source's tree if
// that has arrived; else the tree it was served with in prev (the previous
// version, so a version bump never makes a skill vanish while the new one
// is fetched), if that still agrees with the Skill; else it is pending and
// absent. A previous version verified under other signer requirements is
// never kept: a context that starts requiring signatures must not go on
// serving what was loaded unsigned. The caller holds s.mu.
func (s *Server) withContent(snap, prev *snapshot) *snapshot {
	next := *snap
	next.trees, next.stale = map[string]skillpack.Tree{}, map[string]bool{}
	for _, sk := range snap.externalSkills() {
		if st := s.sources[snap.sourceKey(sk)]; st != nil && st.tree != nil {
			next.trees[sk.Name] = st.tree
		} else if t, ok := prev.treeOf(sk.Name); ok && prev.signers == snap.signers {
			next.trees[sk.Name], next.stale[sk.Name] = t, true
		}
	}
	full, rejected := snap.published.WithAvailableExternal(sources.ExternalSkillsOf(next.trees))
	for _, sk := range snap.externalSkills() {
		err, ok := rejected[sk.Name]
		st := s.sources[snap.sourceKey(sk)]
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
				s.opts.Logger.Error("Skill source refused", "skill", sk.Name, "source", sk.Source.String(), "error", err)
				s.metrics.sourceFailures.Inc()
			}
			st.failure, st.reason = err, reasonDisagrees
		}
	}
	next.context = full
	return &next
}

// treeOf is the tree snap serves for a skill; snap may be nil.
func (snap *snapshot) treeOf(skill string) (skillpack.Tree, bool) {
	if snap == nil {
		return nil, false
	}
	t, ok := snap.trees[skill]
	return t, ok
}

// fetchMissing starts a fetch, each in its own goroutine and outside the
// reload lock, of every source of snap that hostd does not hold and is not
// already fetching; a failed one is tried again SourceRetry after its last
// try. The caller holds s.mu.
func (s *Server) fetchMissing(ctx context.Context, snap *snapshot) {
	now := time.Now()
	var fetcher *sources.Fetcher
	for _, sk := range snap.externalSkills() {
		key := snap.sourceKey(sk)
		st := s.sources[key]
		if st == nil {
			st = &sourceState{}
			s.sources[key] = st
		}
		if st.tree != nil || st.fetching || (st.failure != nil && now.Sub(st.lastTry) < s.opts.SourceRetry) {
			continue
		}
		if fetcher == nil {
			// The context's signer requirements, on top of the process's
			// own (--skill-signers): requirements that do not parse make
			// a fetcher that refuses every source, saying why.
			fetcher = s.opts.Sources.Requiring(snap.published.Manifest().SkillSigners)
		}
		st.fetching, st.lastTry = true, now
		s.fetches.Add(1)
		go s.fetch(ctx, fetcher, sk.Name, key, *sk.Source, st)
	}
}

// fetch fetches one source within SourceTimeout and, once it has arrived,
// serves the current context again with it: the policy stays as it is, the
// skill's content moves to its pinned version.
func (s *Server) fetch(ctx context.Context, fetcher *sources.Fetcher, skill, key string, src contract.SkillSource, st *sourceState) {
	defer s.fetches.Done()
	fctx, cancel := context.WithTimeout(ctx, s.opts.SourceTimeout)
	tree, err := fetcher.Fetch(fctx, src)
	cancel()

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sources[key] != st {
		return // no context needs it any more
	}
	st.fetching = false
	if err != nil {
		st.failure, st.reason = err, sources.Reason(err)
		s.metrics.sourceFailures.Inc()
		s.opts.Logger.Error("Skill source failed; retrying later", "skill", skill, "source", key, "retryIn", s.opts.SourceRetry, "error", err)
	} else {
		st.tree, st.failure, st.reason = tree, nil, ""
		s.opts.Logger.Info("Skill source fetched", "skill", skill, "source", key)
	}
	cur := s.current.Load()
	if err != nil || ctx.Err() != nil || cur == nil || !cur.uses(key) {
		s.publishStatus()
		return
	}
	_ = s.serve(ctx, cur)
}

// uses reports whether snap has a skill pinned to the source key.
func (snap *snapshot) uses(key string) bool {
	for _, sk := range snap.externalSkills() {
		if snap.sourceKey(sk) == key {
			return true
		}
	}
	return false
}

// pruneSources forgets the sources snap does not use, so memory follows the
// served context rather than every source ever pinned. A fetch under way
// finds its state gone and drops its result. The caller holds s.mu.
func (s *Server) pruneSources(snap *snapshot) {
	used := map[string]bool{}
	for _, sk := range snap.externalSkills() {
		used[snap.sourceKey(sk)] = true
	}
	for key := range s.sources {
		if !used[key] {
			delete(s.sources, key)
		}
	}
}

// sourceStatuses lists snap's external skills that are not served at their
// pinned version. The caller holds s.mu.
func (s *Server) sourceStatuses(snap *snapshot) []SourceStatus {
	var out []SourceStatus
	for _, sk := range snap.externalSkills() {
		st := s.sources[snap.sourceKey(sk)]
		if st != nil && st.tree != nil && st.failure == nil {
			continue
		}
		ss := SourceStatus{Skill: sk.Name, Source: sk.Source.String(), State: "fetching", Serving: "nothing"}
		if st != nil && st.failure != nil {
			ss.State, ss.Reason = "failing", st.reason
		}
		if snap.stale[sk.Name] {
			ss.Serving = "previous version"
		}
		out = append(out, ss)
	}
	return out
}

// wait waits for the fetches under way, each bounded by SourceTimeout.
func (s *Server) wait() { s.fetches.Wait() }
