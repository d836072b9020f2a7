package hostd

import (
	"context"
	"log/slog"
	"sync"

	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/published"
)

// SkillSources keeps the external skills (spec.source) of the context hostd
// serves: it fetches their pinned sources in the background, keeps what
// arrived and says what is not served yet and why. `loadout hostd` wires in
// internal/skillsources (a Keeper); hostd knows only this interface, so a
// new kind of source grows that package, not hostd. Every method is called
// with the lock hostd handed over (SourceHooks.Lock) held.
type SkillSources interface {
	// Serve returns pc, as loaded, completed with the external content held
	// for it, and where its skills' content is read: what hostd serves until
	// the next Serve. A skill whose content it does not hold yet is left
	// out (the completed context's Holds says which).
	Serve(pc *published.Context) (*published.Context, materialize.ContentSource)
	// Fetch starts, in the background, the fetches the served context still
	// needs (a failed source once it is due again) and forgets the sources
	// it does not use.
	Fetch(ctx context.Context)
	// Unserved calls each for every external skill of the served context
	// not served at its pinned version (SourceStatus).
	Unserved(each func(skill, source string, failing bool, reason string, previous bool))
	// Wait waits for the fetches under way; called without the lock.
	Wait()
}

// SourceHooks is what hostd hands the SkillSources it is given.
type SourceHooks struct {
	// Lock is hostd's reload lock: SkillSources' methods run under it, and
	// a fetch that ends takes it to record its result and call Arrived.
	Lock sync.Locker
	// Logger is hostd's.
	Logger *slog.Logger
	// Failed counts a failed fetch or refused content
	// (loadout_hostd_skill_source_failures_total).
	Failed func()
	// Arrived is called, with Lock held, when a fetch ends: serveAgain
	// when its content arrived for the served context (hostd serves it
	// again with it), else hostd publishes the new status.
	Arrived func(ctx context.Context, serveAgain bool)
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

// sourceStatuses lists the served context's external skills that are not
// served at their pinned version. The caller holds s.mu.
func (s *Server) sourceStatuses() []SourceStatus {
	var out []SourceStatus
	s.skills.Unserved(func(skill, source string, failing bool, reason string, previous bool) {
		ss := SourceStatus{Skill: skill, Source: source, State: "fetching", Serving: "nothing"}
		if failing {
			ss.State, ss.Reason = "failing", reason
		}
		if previous {
			ss.Serving = "previous version"
		}
		out = append(out, ss)
	})
	return out
}

// sourceArrived is SourceHooks.Arrived: once a skill's content arrived, the
// current context is served again with it (the policy stays as it is);
// otherwise only /readyz and the metrics change. The caller holds s.mu.
func (s *Server) sourceArrived(ctx context.Context, serveAgain bool) {
	if cur := s.current.Load(); serveAgain && cur != nil {
		_ = s.serve(ctx, cur)
		return
	}
	s.publishStatus()
}

// wait waits for the fetches under way.
func (s *Server) wait() { s.skills.Wait() }

// reasonNoSources is why a hostd given no SkillSources serves no external
// skill.
const reasonNoSources = "this hostd fetches no external skills (it was started without skill sources)"

// noSkillSources is the SkillSources of a hostd that was given none: every
// external skill stays pending and is reported failing, saying why.
type noSkillSources struct{ served *published.Context }

func (n *noSkillSources) Serve(pc *published.Context) (*published.Context, materialize.ContentSource) {
	n.served = pc
	full, _ := pc.WithAvailableExternal(nil)
	return full, materialize.InlineContent{}
}

func (*noSkillSources) Fetch(context.Context) {}

func (n *noSkillSources) Unserved(each func(skill, source string, failing bool, reason string, previous bool)) {
	if n.served == nil {
		return
	}
	for _, sk := range n.served.Skills() {
		if sk.Source != nil {
			each(sk.Name, sk.Source.String(), true, reasonNoSources, false)
		}
	}
}

func (*noSkillSources) Wait() {}
